"""The API's one HTTP router: every route that is not a resource (the resources are ``ResourceApp``'s own two
dictionary lookups), declared as data. A ``Route`` names its method and path (exact, or a prefix with one
trailing ``{parameter}``), who may call it, its handler, and what the OpenAPI document says of it; ``Routes``
finds one by two dictionary lookups. Handlers take Starlette's ``Request`` and give a ``Response`` or a JSON
document.

Examples
--------
>>> async def hello(request, param): return {"hello": param}
>>> routes = Routes([Route("GET", "/hi/{name}", hello, auth="none"), Route("GET", "/", hello, auth="none")])
>>> routes.find("GET", "/hi/you")[1], routes.find("GET", "/")[1], routes.find("POST", "/hi/you")
('you', None, 'method')
>>> routes.find("GET", "/nowhere") is None
True
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

Handler = Callable[[Request, str | None], Awaitable[Response | dict[str, Any]]]
Auth = Literal["admin", "any", "none"]  # an admin's token (a read may send the web view's cookie), any, none
Answer = Literal["json", "stream", "text"]  # a JSON object; an event stream; plain text (Prometheus')


@dataclass(frozen=True)
class Route:
    """One route. ``body`` and ``param_type`` say what the OpenAPI document describes (and ``body`` is what
    the handler validates); ``documented`` False keeps it out of the document (the web view's pages)."""

    method: str
    path: str
    handler: Handler
    auth: Auth = "admin"
    status: int = 200
    tags: tuple[str, ...] = ("srfabric",)
    summary: str = ""
    body: type[BaseModel] | None = None
    param_type: type = str
    answers: Answer = "json"
    documented: bool = True
    name: str = field(default="")

    @property
    def param(self) -> str | None:
        """The trailing parameter's name, or None for an exact path."""
        last = self.path.rsplit("/", 1)[-1]
        return last[1:-1] if last.startswith("{") and last.endswith("}") else None

    @property
    def prefix(self) -> str:
        return self.path.rsplit("/", 1)[0] if self.param else self.path


class Routes:
    """The routes by method and path: exact ones first, then those with a trailing parameter."""

    def __init__(self, routes: list[Route]) -> None:
        self.all = routes
        self.exact = {(r.method, r.path): r for r in routes if r.param is None}
        self.prefixed = {(r.method, r.prefix): r for r in routes if r.param is not None}
        self.paths = {r.path for r in routes if r.param is None} | {r.prefix for r in routes if r.param}

    def find(self, method: str, path: str) -> tuple[Route, str | None] | Literal["method"] | None:
        """The route and its parameter; ``"method"`` when the path is served by another method; None when no
        route has the path. A trailing slash is ignored where the path without it is a route's."""
        for candidate in dict.fromkeys((path, path.rstrip("/") or "/")):
            route = self.exact.get((method, candidate))
            if route is not None:
                return route, None
            head, _, param = candidate.rpartition("/")
            route = self.prefixed.get((method, head)) if param else None
            if route is not None:
                return route, param
            if candidate in self.paths or (param and head in self.paths and any(
                    r.prefix == head and r.param for r in self.all)):
                return "method"
        return None


def json_bytes(content: Any) -> bytes:
    """Starlette's JSONResponse encoding (compact, UTF-8, no NaN), so both paths answer byte for byte alike."""
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
