"""A small networking-sfc client over HTTP, used by ``srfabric chain`` and ``srfabric bench deploy``."""

from __future__ import annotations

import time
from typing import Any

import httpx

from srfabric.errors import SrfabricError

PREFIX = {"ports": "/v2.0"}
MEMBER = {"ports": "port", "flow_classifiers": "flow_classifier", "port_pairs": "port_pair",
          "port_pair_groups": "port_pair_group", "port_chains": "port_chain", "service_graphs": "service_graph"}


class ApiFailure(SrfabricError):
    """The server answered with an error (its NeutronError type and message are kept)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(kind, f"{message} (HTTP {status})")
        self.status = status
        self.kind = kind


class SfcClient:
    """``timings`` collects (step, seconds) for every request made."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        headers = {"X-Auth-Token": token} if token else {}
        self.http = httpx.Client(base_url=url, headers=headers, timeout=timeout)
        self.timings: list[tuple[str, float]] = []

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> SfcClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, kind: str, ident: str | None = None) -> str:
        base = f"{PREFIX.get(kind, '/v2.0/sfc')}/{kind}"
        return f"{base}/{ident}" if ident else base

    def _send(self, method: str, url: str, step: str, **kwargs: Any) -> httpx.Response:
        begin = time.perf_counter()
        try:
            response = self.http.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            raise SrfabricError("--url", f"{self.http.base_url}: {error}") from None
        self.timings.append((step, time.perf_counter() - begin))
        if response.status_code >= 400:
            try:
                found = response.json()["NeutronError"]
                kind, message = str(found["type"]), str(found["message"])
            except (ValueError, KeyError, TypeError):
                kind, message = "HTTPError", response.text[:200]
            raise ApiFailure(response.status_code, kind, message)
        return response

    def create(self, kind: str, body: dict[str, Any], step: str | None = None) -> dict[str, Any]:
        member = MEMBER[kind]
        result: dict[str, Any] = self._send("POST", self._url(kind), step or kind, json={member: body}).json()[member]
        return result

    def update(self, kind: str, ident: str, body: dict[str, Any]) -> dict[str, Any]:
        member = MEMBER[kind]
        result: dict[str, Any] = self._send("PUT", self._url(kind, ident), kind, json={member: body}).json()[member]
        return result

    def delete(self, kind: str, ident: str) -> None:
        self._send("DELETE", self._url(kind, ident), kind)

    def show(self, kind: str, ident: str) -> dict[str, Any]:
        result: dict[str, Any] = self._send("GET", self._url(kind, ident), kind).json()[MEMBER[kind]]
        return result

    def get(self, path: str) -> dict[str, Any]:
        result: dict[str, Any] = self._send("GET", path, path).json()
        return result

    def list(self, kind: str, **filters: str) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._send("GET", self._url(kind), kind, params=filters).json()[kind]
        return result
