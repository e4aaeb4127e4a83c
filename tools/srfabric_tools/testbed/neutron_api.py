"""Neutron's REST API as one user of the stack's Keystone: a token from ``clouds.yaml``'s credentials (Keystone v3
password authentication), then JSON requests with it. The benchmark's client: the ``openstack`` command's own
start-up (a second or more) would hide what is measured. Safe to share between threads (one connection per call).

>>> NeutronApi.body_of("port_chain", {"name": "web"})
b'{"port_chain": {"name": "web"}}'
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from pathlib import Path
from typing import Any

import yaml

from srfabric.errors import SrfabricError


class NeutronApi:
    def __init__(self, clouds_yaml: Path, cloud: str, neutron_url: str, timeout_s: float = 60.0) -> None:
        try:
            auth = yaml.safe_load(clouds_yaml.read_text())["clouds"][cloud]["auth"]
        except (OSError, KeyError, TypeError, yaml.YAMLError) as error:
            raise SrfabricError("clouds.yaml", f"no cloud {cloud!r} in {clouds_yaml}: {error}") from None
        self.neutron = urllib.parse.urlsplit(neutron_url)
        self.timeout_s = timeout_s
        self.token = self._token(auth)

    def _token(self, auth: dict[str, str]) -> str:
        body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": auth["username"], "password": auth["password"], "domain": {"name": "Default"}}}},
            "scope": {"project": {"name": auth["project_name"], "domain": {"name": "Default"}}}}}
        keystone = urllib.parse.urlsplit(auth["auth_url"])
        connection = http.client.HTTPConnection(keystone.netloc, timeout=self.timeout_s)
        try:
            connection.request("POST", keystone.path.rstrip("/") + "/auth/tokens", json.dumps(body),
                               {"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            token = answer.getheader("X-Subject-Token")
        finally:
            connection.close()
        if answer.status != 201 or not token:
            raise SrfabricError("keystone", f"no token for {auth['username']}: HTTP {answer.status}")
        return token

    @staticmethod
    def body_of(member: str, fields: dict[str, Any]) -> bytes:
        return json.dumps({member: fields}).encode()

    def call(self, method: str, path: str, payload: bytes | None = None) -> tuple[int, dict[str, Any], float]:
        """(status, JSON answer, seconds from sending to the whole answer)."""
        connection = http.client.HTTPConnection(self.neutron.netloc, timeout=self.timeout_s)
        begin = time.perf_counter()
        try:
            connection.request(method, path, payload, {"X-Auth-Token": self.token,
                                                       "Content-Type": "application/json"})
            answer = connection.getresponse()
            raw = answer.read()
        finally:
            connection.close()
        took = time.perf_counter() - begin
        try:
            document = json.loads(raw) if raw else {}
        except ValueError:  # not JSON: a server's own error page (eventlet's "500 Internal Server Error")
            raise SrfabricError("neutron", f"{method} {path} answered {answer.status}, not JSON: "
                                           f"{raw[:200].decode(errors='replace')!r}") from None
        return answer.status, document if isinstance(document, dict) else {}, took

    def create(self, collection: str, member: str, fields: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Make one resource (``collection`` is its path under /v2.0, ``sfc/port_chains``); its record and the
        seconds Neutron took."""
        status, answer, took = self.call("POST", f"/v2.0/{collection}", self.body_of(member, fields))
        if status != 201:
            raise SrfabricError(collection, f"create answered {status}: {answer}")
        return answer[member], took

    def update(self, collection: str, member: str, ident: str, fields: dict[str, Any]) -> dict[str, Any]:
        status, answer, _ = self.call("PUT", f"/v2.0/{collection}/{ident}", self.body_of(member, fields))
        if status != 200:
            raise SrfabricError(collection, f"update of {ident} answered {status}: {answer}")
        return dict(answer[member])

    def delete(self, collection: str, ident: str) -> None:
        status, answer, _ = self.call("DELETE", f"/v2.0/{collection}/{ident}")
        if status != 204:
            raise SrfabricError(collection, f"delete of {ident} answered {status}: {answer}")
