"""Keystone tokens taken by ``serve`` itself (``--keystone URL``), for a deployment without Neutron in front.

A request's X-Auth-Token is checked with Keystone as keystonemiddleware checks it: ``GET /v3/auth/tokens`` with
the token as ``X-Subject-Token``, under srfabric's own service user. A valid token is its project's member, or an
admin when Keystone gave it the ``admin`` role. A check is kept ``cache_s`` (never past the token's expiry); a
refused token is remembered ``REFUSED_S``, so a client retrying a bad token does not reach Keystone each time.
Keystone not answering is a 503 (retry later), not a 401. ``--token`` stays an admin's without Keystone (the
Neutron drivers' own).

>>> principal, until = read_token({"token": {"expires_at": "2026-12-06T14:00:00.000000Z",
...     "project": {"id": "8f2c"}, "roles": [{"name": "member"}, {"name": "reader"}]}})
>>> principal, until
(Principal(project='8f2c', admin=False), 1796565600.0)
>>> read_token({"token": {"expires_at": "2026-12-06T14:00:00Z", "roles": []}})
Traceback (most recent call last):
...
srfabric.errors.SrfabricError: keystone: token.project: an unscoped token names no project; ask for a project-scoped one
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from srfabric.api.errors import ApiError
from srfabric.api.projects import Principal, TokenBook
from srfabric.errors import SrfabricError

log = logging.getLogger(__name__)

REFUSED_S = 10.0  # a token Keystone refused is refused again without asking, this long
TIMEOUT_S = 5.0  # one request to Keystone
SERVICE_MARGIN_S = 60.0  # the service user's own token is renewed this long before it expires


@dataclass(frozen=True)
class KeystoneAccess:
    """Where Keystone is (its v3 endpoint) and srfabric's service user there."""

    url: str
    user: str
    password: str
    project: str = "service"
    domain: str = "Default"
    cache_s: float = 300.0  # keystonemiddleware's token_cache_time


def read_token(document: Any) -> tuple[Principal, float]:
    """The principal a validated token is and when it expires (POSIX seconds); ``SrfabricError`` naming the field
    of Keystone's answer that is not as its API says."""
    token = document.get("token") if isinstance(document, dict) else None
    if not isinstance(token, dict):
        raise SrfabricError("keystone", "token: Keystone's answer has no token object")
    project = token.get("project")
    if not isinstance(project, dict) or not isinstance(project.get("id"), str) or not project["id"]:
        raise SrfabricError("keystone", "token.project: an unscoped token names no project; ask for a "
                                        "project-scoped one")
    roles = token.get("roles")
    if not isinstance(roles, list) or not all(isinstance(r, dict) and isinstance(r.get("name"), str) for r in roles):
        raise SrfabricError("keystone", "token.roles: must be a list of objects with a name")
    expires = token.get("expires_at")
    try:
        until = datetime.fromisoformat(str(expires).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise SrfabricError("keystone", f"token.expires_at: {expires!r} is not an ISO 8601 time") from None
    return Principal(project["id"], admin=any(role["name"] == "admin" for role in roles)), until


class KeystoneBook(TokenBook):
    """The static admin token (``--token``) and every token Keystone vouched for, kept by digest."""

    def __init__(self, access: KeystoneAccess, admin_token: str | None,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__({} if admin_token is None else TokenBook.single(admin_token).entries)
        self.access, self.clock = access, clock
        self.vouched: dict[bytes, tuple[Principal, float]] = {}  # digest -> principal, kept until
        self.refused: dict[bytes, float] = {}  # digest -> refused again without asking until
        self._service: tuple[str, float] | None = None  # srfabric's own token, and when to renew it
        self.asked = 0  # validations sent to Keystone (for tests and /metrics)

    def who(self, given: bytes | None, peer: str = "") -> Principal:
        if given is not None:
            kept = self.vouched.get(hashlib.sha256(given).digest())
            if kept is not None and kept[1] > self.clock():
                return kept[0]
        return super().who(given, peer)

    async def learn(self, given: bytes | None) -> None:
        """Ask Keystone about ``given`` unless it is the static token, vouched for or refused lately."""
        if given is None:
            return
        key, now = hashlib.sha256(given).digest(), self.clock()
        kept = self.vouched.get(key)
        if (self.entries and key in self.entries) or (kept is not None and kept[1] > now) \
                or self.refused.get(key, 0.0) > now:
            return
        answer = await asyncio.to_thread(self._validate, given.decode("latin-1"))
        if answer is None:
            self.refused[key] = now + REFUSED_S
            return
        principal, expires = answer
        self.vouched[key] = (principal, min(expires, now + self.access.cache_s))
        if len(self.vouched) > 10_000:  # forget the expired ones now and then
            self.vouched = {k: v for k, v in self.vouched.items() if v[1] > now}

    def _validate(self, token: str) -> tuple[Principal, float] | None:
        """Keystone's word on ``token``: its principal and expiry, or None when Keystone refused it."""
        for attempt in range(2):
            status, document, _ = self._request("GET", "/auth/tokens", None,
                                                {"X-Auth-Token": self._service_token(), "X-Subject-Token": token})
            self.asked += 1
            if status == 200:
                try:
                    return read_token(document)
                except SrfabricError as error:
                    log.warning("a token Keystone vouched for is refused: %s", error.message)
                    return None
            if status == 401 and attempt == 0:  # srfabric's own token expired early: renew it once
                self._service = None
                continue
            if status in (401, 403, 404):
                return None
            break
        raise ApiError(503, "ServiceUnavailable", f"keystone: {self.access.url} answered {status} to a token check")

    def _service_token(self) -> str:
        """srfabric's own project-scoped token (a password authentication), kept until shortly before it expires."""
        now = self.clock()
        if self._service is not None and self._service[1] > now:
            return self._service[0]
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": self.access.user, "domain": {"name": self.access.domain}, "password": self.access.password}}},
            "scope": {"project": {"name": self.access.project, "domain": {"name": self.access.domain}}}}}
        status, document, headers = self._request("POST", "/auth/tokens", body, {})
        subject = headers.get("X-Subject-Token")
        if status != 201 or not subject:
            raise ApiError(503, "ServiceUnavailable", f"keystone: srfabric's service user {self.access.user} "
                                                      f"could not log in ({status})")
        _, expires = read_token(document)
        self._service = (subject, expires - SERVICE_MARGIN_S)
        return subject

    def _request(self, method: str, path: str, body: Any, headers: dict[str, str]
                 ) -> tuple[int, Any, dict[str, str]]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.access.url.rstrip("/") + path, data, method=method,
                                         headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as reply:  # noqa: S310 - the operator's URL
                return reply.status, _json(reply.read()), dict(reply.headers)
        except urllib.error.HTTPError as error:
            return error.code, _json(error.read()), dict(error.headers)
        except (OSError, ValueError) as error:
            raise ApiError(503, "ServiceUnavailable", f"keystone: {self.access.url} did not answer: "
                                                      f"{error}") from None


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None
