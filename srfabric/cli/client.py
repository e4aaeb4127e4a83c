"""A small networking-sfc client over HTTP, used by ``srfabric chain`` and ``srfabric bench deploy``."""

from __future__ import annotations

import json
import os
import ssl
import time
import urllib.parse
from typing import Any

from srfabric.api.web.http11 import Connection
from srfabric.errors import SrfabricError

CACERT_ENV = "SRFABRIC_CACERT"  # the CA an https:// URL's certificate is checked against (srfabric pki init)
PREFIX = {"ports": "/v2.0", "streams": "/v2.0/srfabric"}
MEMBER = {"ports": "port", "flow_classifiers": "flow_classifier", "port_pairs": "port_pair",
          "port_pair_groups": "port_pair_group", "port_chains": "port_chain", "service_graphs": "service_graph",
          "streams": "stream"}


class ApiFailure(SrfabricError):
    """The server answered with an error (its NeutronError type and message are kept)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(kind, f"{message} (HTTP {status})")
        self.status = status
        self.kind = kind


class SfcClient:
    """``timings`` collects (step, seconds) for every request made.

    One kept-alive HTTP/1.1 connection of its own (``http11``): richer clients spend
    up to a quarter of a millisecond more per request, which matters when a
    deployment's requests each take about a millisecond.
    """

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SrfabricError("--url", f"{url!r} is not an http:// or https://host:port URL")
        if token is not None and (not token.isprintable() or not token.isascii()):
            raise SrfabricError("--token", "the token must be printable ASCII (it is sent as the X-Auth-Token header)")
        self.base_url = url
        tls = None
        if parts.scheme == "https":  # the server's certificate checked against $SRFABRIC_CACERT, else the system's
            tls = ssl.create_default_context(cafile=os.environ.get(CACERT_ENV) or None)
        self.http = Connection(parts.hostname, parts.port or (443 if tls else 80), timeout, tls)
        self.headers = {"Content-Type": "application/json", **({"X-Auth-Token": token} if token else {})}
        self.timings: list[tuple[str, float]] = []

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> SfcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, kind: str, ident: str | None = None) -> str:
        base = f"{PREFIX.get(kind, '/v2.0/sfc')}/{kind}"
        return f"{base}/{urllib.parse.quote(ident, safe='')}" if ident else base

    def _connect_to(self, url: str) -> None:
        """Send the next requests to ``url`` (the leader a follower named)."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise SrfabricError("--url", f"{self.base_url} follows a leader at {url!r}, which is not an http URL")
        self.http.close()
        self.base_url = url
        self.http = Connection(parts.hostname, parts.port or 80, self.http.timeout)

    def _send(self, method: str, url: str, step: str, body: Any = None, params: dict[str, str] | None = None,
              redirected: bool = False) -> Any:
        if params:
            url = f"{url}?{urllib.parse.urlencode(params)}"
        if self.http.closed_by_peer():
            self.http.close()  # the next request connects again
        begin = time.perf_counter()
        try:
            response = self.http.request(method, url, self.headers, None if body is None else json.dumps(body).encode())
        except OSError as error:  # the connection is closed: the next request opens a new one
            raise SrfabricError("--url", f"{self.base_url}: {error}") from None
        except ValueError as error:  # a path that would break the request line
            raise SrfabricError("path", str(error)) from None
        raw = response.body
        self.timings.append((step, time.perf_counter() - begin))
        try:
            data = json.loads(raw) if raw else None
        except ValueError:
            data = None
        if response.status == 307 and isinstance(data, dict) and not redirected:  # a follower: to its leader
            leader = str(data.get("NeutronError", {}).get("detail", ""))
            self._connect_to(leader)
            return self._send(method, url, step, body, redirected=True)
        if response.status >= 400 or response.status == 307:
            try:
                found = data["NeutronError"]  # type: ignore[index]
                kind, message = str(found["type"]), str(found["message"])
            except (KeyError, TypeError):
                kind, message = "HTTPError", raw[:200].decode(errors="replace")
            raise ApiFailure(response.status, kind, message)
        return data

    def create(self, kind: str, body: dict[str, Any], step: str | None = None) -> dict[str, Any]:
        member = MEMBER[kind]
        result: dict[str, Any] = self._send("POST", self._url(kind), step or kind, {member: body})[member]
        return result

    def create_many(self, kind: str, bodies: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A bulk create (streams: admitted together): the created records and the refused requests."""
        result = self._send("POST", self._url(kind), kind, {kind: bodies})
        return result[kind], result.get("refused", [])

    def update(self, kind: str, ident: str, body: dict[str, Any]) -> dict[str, Any]:
        member = MEMBER[kind]
        result: dict[str, Any] = self._send("PUT", self._url(kind, ident), kind, {member: body})[member]
        return result

    def delete(self, kind: str, ident: str) -> None:
        self._send("DELETE", self._url(kind, ident), kind)

    def show(self, kind: str, ident: str) -> dict[str, Any]:
        result: dict[str, Any] = self._send("GET", self._url(kind, ident), kind)[MEMBER[kind]]
        return result

    def get(self, path: str) -> dict[str, Any]:
        result: dict[str, Any] = self._send("GET", path, path)
        return result

    def reschedule(self, duty_percent: int | None) -> dict[str, Any]:
        """The gates' new duty cycle (None: open in the streams' slots); the schedule as it now is."""
        result: dict[str, Any] = self._send("PUT", "/v2.0/srfabric/schedule", "schedule",
                                            {"schedule": {"duty_percent": duty_percent}})["schedule"]
        return result

    def reoptimise(self) -> dict[str, Any]:
        """Re-solve the admitted streams' slots and paths (S/PR, all kept); the schedule as it now is."""
        result: dict[str, Any] = self._send("POST", "/v2.0/srfabric/schedule/reoptimise", "schedule", {})["schedule"]
        return result

    def report_frer(self, report: dict[str, Any]) -> dict[str, Any]:
        """An end-system eliminator's counters (``frer_counters.FrerReport``); how many streams were matched."""
        result: dict[str, Any] = self._send("POST", "/v2.0/srfabric/frer/reports", "frer", {"report": report})["report"]
        return result

    def report_psfp(self, report: dict[str, Any]) -> dict[str, Any]:
        """An edge's per-stream policing counters (``psfp_book.PsfpReport``); how many streams were matched."""
        result: dict[str, Any] = self._send("POST", "/v2.0/srfabric/psfp/reports", "psfp", {"report": report})["report"]
        return result

    def list(self, kind: str, **filters: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._send("GET", self._url(kind), kind, params=filters)[kind]
        return result
