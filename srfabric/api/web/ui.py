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
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response, StreamingResponse

from srfabric.api.errors import ApiError
from srfabric.api.resources.views import chains_view, change_mark, switch_view
from srfabric.api.service import SfcService
from srfabric.errors import SrfabricError

STATIC = Path(__file__).with_name("static")
ASSETS = {"app.js": "text/javascript", "app.css": "text/css"}
COOKIE = "srfabric_token"
LOGIN = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>srfabric</title>
<link rel="stylesheet" href="/ui/app.css"><link rel="icon" href="data:,"></head>
<body class="login"><form method="post" action="/ui/">
<h1>srfabric</h1><label>Token <input name="token" type="password" autofocus></label>
<button type="submit">Open</button></form></body></html>"""


def add_ui_routes(app: FastAPI, service: SfcService, authenticate: Callable[[Request], Awaitable[None]],
                  valid: Callable[[str | None], bool], secure: bool = False) -> None:
    """The web view's routes on ``app``; ``valid`` says whether a token is the API's; ``secure``: the cookie goes
    over HTTPS only."""

    @app.get("/v2.0/srfabric/chains", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def chains() -> dict[str, Any]:
        """Every chain the controller runs: classifier, functions in order per path, hops, each pathlet's
        ports and header actions, and the entries it costs per switch (or why it is not routed)."""
        return {"chains": chains_view(service.controller, service.labels())}

    @app.get("/v2.0/srfabric/switches/{dpid}", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def switch(dpid: int) -> dict[str, Any]:
        """One switch: role, entries by table with packet counters (read from the switch), frames dropped
        for forged headers."""
        try:
            return {"switch": await switch_view(service.controller, dpid)}
        except SrfabricError as error:
            raise ApiError(404, "SwitchNotFound", str(error)) from None

    @app.get("/v2.0/srfabric/events", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def events() -> StreamingResponse:
        """Server-Sent Events: ``change`` (data: a counter) when the fabric, the chains or what is unrouted
        change; ``tick`` every second."""
        return StreamingResponse(event_stream(service), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    @app.get("/ui", include_in_schema=False)
    async def ui_root() -> Response:
        return RedirectResponse("/ui/")

    @app.get("/ui/", include_in_schema=False)
    async def ui(request: Request, token: str | None = None) -> Response:
        if token is not None:  # once: the token becomes a cookie and leaves the address bar
            if not valid(token):
                return HTMLResponse(LOGIN.replace("<h1>srfabric</h1>", "<h1>srfabric</h1><p>Wrong token.</p>"),
                                    status_code=401)
            answer = RedirectResponse("/ui/", status_code=303)
            answer.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/", secure=secure)
            return answer
        if not valid(request.cookies.get(COOKIE)):
            return HTMLResponse(LOGIN)
        return FileResponse(STATIC / "index.html", media_type="text/html", headers={"Cache-Control": "no-store"})

    @app.post("/ui/", include_in_schema=False)
    async def login(request: Request) -> Response:
        """The login form (posted, so the token stays out of the address bar and the history)."""
        fields = urllib.parse.parse_qs((await request.body())[:4096].decode("latin-1"))
        return await ui(request, (fields.get("token") or [""])[0])

    @app.get("/ui/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        if name not in ASSETS:
            raise ApiError(404, "HTTPNotFound", f"/ui/{name} not found.")
        return FileResponse(STATIC / name, media_type=ASSETS[name])


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
