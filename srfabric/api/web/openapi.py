"""The OpenAPI document (``/openapi.json``), generated from the declarations the router serves: every resource
kind's five operations (``routes``) and every documented ``Route``. FastAPI writes it from stand-in endpoints
whose signatures say the path parameter and the body; they are never called."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from srfabric.api.web.router import Route, json_bytes
from srfabric.api.web.routes import documented_routes

TITLE, VERSION = "srfabric", "2.0"
DESCRIPTION = "OpenStack networking-sfc's API on srfabric's source-routed fabric."


def stand_in(route: Route) -> Callable[..., Any]:
    """An endpoint with ``route``'s parameter and body in its signature, for FastAPI to describe."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = [inspect.Parameter(route.param, kind, annotation=route.param_type)] if route.param else []
    if route.body is not None:
        parameters.append(inspect.Parameter("payload", kind, annotation=route.body))

    async def endpoint(**_: Any) -> None:
        """Never called."""

    answers = dict[str, Any] if route.answers == "json" and route.status != 204 else inspect.Signature.empty
    endpoint.__signature__ = inspect.Signature(parameters, return_annotation=answers)  # type: ignore[attr-defined]
    endpoint.__name__ = route.name or route.path.strip("/").replace("/", "_") or "root"
    endpoint.__doc__ = route.summary
    return endpoint


def described(route: Route) -> APIRoute:
    response = Response if route.answers == "text" else JSONResponse
    return APIRoute(route.path, stand_in(route), methods=[route.method], status_code=route.status,
                    name=route.name or None, tags=list(route.tags), response_class=response)


class OpenApi:
    """The document for ``routes`` and the resources, made once, on its first request."""

    def __init__(self, routes: list[Route]) -> None:
        self.routes = routes
        self.document: dict[str, Any] | None = None

    def build(self) -> dict[str, Any]:
        if self.document is None:
            described_routes = [*documented_routes(), *(described(r) for r in self.routes if r.documented)]
            self.document = get_openapi(title=TITLE, version=VERSION, description=DESCRIPTION,
                                        routes=described_routes)
        return self.document

    def route(self) -> Route:
        async def openapi(request: Request, _: str | None) -> Response:
            return Response(json_bytes(self.build()), media_type="application/json")

        return Route("GET", "/openapi.json", openapi, auth="none", documented=False)
