"""The REST rows of ``srfabric bench hostile``: what a client of the API (HTTPS, tokens with projects and roles)
gets without a token, with a wrong one, as a member of project B going after project A's resources, and with
bodies and paths made to hurt the server. Each row returns what the attacker got, in words."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx


@dataclass(frozen=True)
class Api:
    url: str
    cacert: Path
    alice: str  # a member of project-a, owner of ``alice_port``
    bob: str  # a member of project-b
    alice_port: str
    scale: float


def client(api: Api, token: str | None) -> httpx.AsyncClient:
    headers = {} if token is None else {"X-Auth-Token": token}
    return httpx.AsyncClient(base_url=api.url, headers=headers, verify=str(api.cacert), timeout=30)


def said(answer: httpx.Response) -> str:
    """A status and the first words of the body."""
    return f"{answer.status_code} {answer.text[:90]!r}"


async def no_token(api: Api) -> str:
    async with client(api, None) as http:
        return said(await http.get("/v2.0/ports"))


async def wrong_token(api: Api) -> str:
    async with client(api, "not-a-token-of-this-api") as http:
        return said(await http.get("/v2.0/ports"))


async def another_projects_ids(api: Api) -> str:
    """Bob reads, lists, renames and deletes Alice's port by its id."""
    async with client(api, api.bob) as http:
        path = f"/v2.0/ports/{api.alice_port}"
        show, update = await http.get(path), await http.put(path, json={"port": {"name": "taken"}})
        delete = await http.delete(path)
        listed = [p["id"] for p in (await http.get("/v2.0/ports")).json()["ports"]]
    return (f"show {show.status_code}, update {update.status_code}, delete {delete.status_code}; "
            f"list holds it: {api.alice_port in listed}")


async def another_project_in_a_body(api: Api) -> str:
    """Bob makes a port in Alice's project, and a port pair of Alice's port."""
    async with client(api, api.bob) as http:
        port = await http.post("/v2.0/ports", json={"port": {"name": "mine", "project_id": "project-a"}})
        pair = await http.post("/v2.0/sfc/port_pairs", json={"port_pair": {"ingress": api.alice_port,
                                                                          "egress": api.alice_port}})
    return f"port in project-a: {said(port)}; pair of Alice's port: {said(pair)}"


async def traversal(api: Api) -> str:
    async with client(api, None) as http:
        answers = [await http.get(path) for path in ("/ui/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
                                                     "/ui/static/..%2f..%2f..%2fetc%2fpasswd",
                                                     "/ui/static/%2e%2e/%2e%2e/api/app.py")]
    leaked = any("root:" in a.text or "def create_app" in a.text for a in answers)
    return f"{', '.join(str(a.status_code) for a in answers)}; a file's contents in an answer: {leaked}"


async def deep_json(api: Api) -> str:
    depth = 100_000
    async with client(api, api.alice) as http:
        return said(await http.post("/v2.0/sfc/flow_classifiers", content="[" * depth + "]" * depth,
                                    headers={"Content-Type": "application/json"}))


async def invalid_utf8(api: Api) -> str:
    async with client(api, api.alice) as http:
        return said(await http.post("/v2.0/sfc/flow_classifiers", content=b'{"flow_classifier": {"name": "\xff\xfe"}}',
                                    headers={"Content-Type": "application/json"}))


async def oversized(api: Api) -> str:
    body = json.dumps({"flow_classifier": {"name": "x" * (3 * 1024 * 1024)}})
    async with client(api, api.alice) as http:
        return said(await http.post("/v2.0/sfc/flow_classifiers", content=body,
                                    headers={"Content-Type": "application/json"}))


async def concurrent_creates(api: Api) -> str:
    """Alice creates classifiers all at once, each its own UDP port; how many were made, and each once."""
    count = max(20, int(200 * api.scale))
    first = 45000
    async with client(api, api.alice) as http:
        answers = await asyncio.gather(*(http.post("/v2.0/sfc/flow_classifiers", json={"flow_classifier": {
            "protocol": "udp", "logical_source_port": api.alice_port, "destination_port_range_min": first + i,
            "destination_port_range_max": first + i}}) for i in range(count)))
        made = Counter(c["destination_port_range_min"] for c in
                       (await http.get("/v2.0/sfc/flow_classifiers")).json()["flow_classifiers"]
                       if first <= (c["destination_port_range_min"] or 0) < first + count)
        for answer in answers:  # leave the API as it was
            if answer.status_code == 201:
                await http.delete(f"/v2.0/sfc/flow_classifiers/{answer.json()['flow_classifier']['id']}")
    statuses = Counter(a.status_code for a in answers)
    return (f"{count} at once: {dict(sorted(statuses.items()))}; held {len(made)}, "
            f"duplicated {sum(1 for n in made.values() if n > 1)}")


ROWS: dict[str, Callable[[Api], Awaitable[str]]] = {
    "no token": no_token,
    "wrong token": wrong_token,
    "member of project B reads, lists, changes and deletes project A's ids": another_projects_ids,
    "member of project B names project A in a body": another_project_in_a_body,
    "path traversal under /ui/": traversal,
    "JSON nested 100,000 deep": deep_json,
    "invalid UTF-8 in a body": invalid_utf8,
    "3 MB body": oversized,
    "concurrent creates": concurrent_creates,
}
