"""The web view (``/ui/``) and the JSON it reads: ``/v2.0/srfabric/chains``, ``/v2.0/srfabric/switches/{dpid}``
and ``/v2.0/srfabric/events`` (Server-Sent Events: ``change`` when the fabric, the chains or what is unrouted
change, ``tick`` every second for counters).

The page is one HTML file, one script and one style sheet shipped in the package (``srfabric/api/web/static``):
plain JavaScript and SVG, nothing fetched from elsewhere. It sends the API's token: ``/ui/?token=...`` (or its
login form, posted) sets it as an HttpOnly cookie, which the read-only routes accept as well as ``X-Auth-Token``
(writes still need the header, so a page elsewhere cannot make a browser change anything).
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response, StreamingResponse

from srfabric.api.errors import ApiError, bad_request
from srfabric.api.projects import TokenBook
from srfabric.api.resources.views import chains_view, change_mark, switch_view
from srfabric.api.service import SfcService
from srfabric.api.web.dispatch import COOKIE
from srfabric.api.web.router import Route
from srfabric.errors import SrfabricError

STATIC = Path(__file__).with_name("static")
ASSETS = {"app.js": "text/javascript", "app.css": "text/css"}
LOGIN = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>srfabric</title>
<link rel="stylesheet" href="/ui/app.css"><link rel="icon" href="data:,"></head>
<body class="login"><form method="post" action="/ui/">
<h1>srfabric</h1><label>Token <input name="token" type="password" autofocus></label>
<button type="submit">Open</button></form></body></html>"""


def ui_routes(service: SfcService, book: TokenBook, secure: bool = False) -> list[Route]:
    """The web view's routes: the JSON it reads, and its page; ``secure``: the cookie goes over HTTPS only."""
    return [*view_routes(service), *page_routes(book, secure)]


def view_routes(service: SfcService) -> list[Route]:
    """The JSON the page reads: chains, one switch, and the events that say when to read again."""

    async def chains(request: Request, _: str | None) -> dict[str, Any]:
        return {"chains": chains_view(service.controller, service.labels())}

    async def switch(request: Request, dpid: str | None) -> dict[str, Any]:
        try:
            number = int(dpid or "")
        except ValueError:
            raise bad_request(f"Invalid input for dpid. Reason: {dpid!r} is not an integer.") from None
        try:
            return {"switch": await switch_view(service.controller, number)}
        except SrfabricError as error:
            raise ApiError(404, "SwitchNotFound", str(error)) from None

    async def events(request: Request, _: str | None) -> Response:
        return StreamingResponse(event_stream(service), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    return [
        Route("GET", "/v2.0/srfabric/chains", chains, name="chains",
              summary="Every chain the controller runs: classifier, functions in order per path, hops, each "
                      "pathlet's ports and header actions, and the entries it costs per switch (or why it is not "
                      "routed)."),
        Route("GET", "/v2.0/srfabric/switches/{dpid}", switch, param_type=int, name="switch",
              summary="One switch: role, entries by table with packet counters (read from the switch), frames "
                      "dropped for forged headers, and what it holds beside what it should hold now (compiled: "
                      "entries, missing, extra, in_sync)."),
        Route("GET", "/v2.0/srfabric/events", events, answers="stream", name="events",
              summary="Server-Sent Events: ``change`` (data: a counter) when the fabric, the chains or what is "
                      "unrouted change; ``tick`` every second."),
    ]


def page_routes(book: TokenBook, secure: bool) -> list[Route]:
    """The page, its login (the token becomes an HttpOnly cookie) and its two assets."""

    async def valid(token: str | None) -> bool:
        given = None if token is None else token.encode()
        try:
            await book.learn(given)  # a Keystone token is asked about first (``api/keystone``)
            book.admin(given)
        except ApiError:
            return False
        return True

    async def ui_root(request: Request, _: str | None) -> Response:
        return RedirectResponse("/ui/")

    async def page(request: Request, token: str | None) -> Response:
        if token is not None:  # once: the token becomes a cookie and leaves the address bar
            if not await valid(token):
                return HTMLResponse(LOGIN.replace("<h1>srfabric</h1>", "<h1>srfabric</h1><p>Wrong token.</p>"),
                                    status_code=401)
            answer = RedirectResponse("/ui/", status_code=303)
            answer.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/", secure=secure)
            return answer
        if not await valid(request.cookies.get(COOKIE)):
            return HTMLResponse(LOGIN)
        return FileResponse(STATIC / "index.html", media_type="text/html", headers={"Cache-Control": "no-store"})

    async def ui(request: Request, _: str | None) -> Response:
        return await page(request, request.query_params.get("token"))

    async def login(request: Request, _: str | None) -> Response:
        """The login form (posted, so the token stays out of the address bar and the history)."""
        fields = urllib.parse.parse_qs((await request.body())[:4096].decode("latin-1"))
        return await page(request, (fields.get("token") or [""])[0])

    async def asset(request: Request, name: str | None) -> Response:
        if name not in ASSETS:
            raise ApiError(404, "HTTPNotFound", f"/ui/{name} not found.")
        return FileResponse(STATIC / name, media_type=ASSETS[name])

    return [
        Route("GET", "/ui", ui_root, auth="none", documented=False),
        Route("GET", "/ui/", ui, auth="none", documented=False),
        Route("POST", "/ui/", login, auth="none", documented=False),
        Route("GET", "/ui/{name}", asset, auth="none", documented=False),
    ]


async def event_stream(service: SfcService, interval: float = 0.25) -> AsyncIterator[bytes]:
    mark, count, ticks = None, 0, 0
    while True:
        now = change_mark(service.controller)
        if now != mark:
            mark, count = now, count + 1
            yield f"event: change\ndata: {json.dumps(count)}\n\n".encode()
        ticks += 1
        if ticks % round(1 / interval) == 0:
            yield b"event: tick\ndata: {}\n\n"
        await asyncio.sleep(interval)
