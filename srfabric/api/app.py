"""The FastAPI application: routes, Neutron-shaped errors, token authentication."""

from __future__ import annotations

import hmac
import logging
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader
from starlette.exceptions import HTTPException as StarletteHTTPException

from srfabric.api.errors import ApiError, neutron_error
from srfabric.api.routes import RESOURCES, add_resource_routes
from srfabric.api.service import SfcService

log = logging.getLogger(__name__)
TOKEN_HEADER = APIKeyHeader(name="X-Auth-Token", auto_error=False, description="the token `srfabric serve` was given")


def validation_message(error: dict[str, Any], method: str) -> str:
    """Neutron's wording for a body that does not fit the schema, naming the field."""
    loc = [str(part) for part in error.get("loc", ()) if part != "body"]
    field = ".".join(loc[1:]) if len(loc) > 1 else (loc[0] if loc else "body")
    kind = error.get("type", "")
    if kind == "json_invalid":
        return "Body contains invalid data"
    if kind == "missing":
        if len(loc) <= 1:
            return f"Unable to find '{loc[0] if loc else 'body'}' in request body"
        return f"Failed to parse request. Required attribute '{field}' not specified"
    if kind == "extra_forbidden":
        if method == "PUT" and len(loc) == 2:
            return f"Cannot update read-only attribute {field}"
        return f"Unrecognized attribute(s) '{field}'"
    return f"Invalid input for {field}. Reason: {error.get('msg', 'invalid')}."


def create_app(service: SfcService, token: str | None) -> FastAPI:
    """``token`` None turns authentication off (local use only)."""
    app = FastAPI(title="srfabric", version="2.0",
                  description="OpenStack networking-sfc's API on srfabric's source-routed fabric.")

    async def authenticate(request: Request) -> None:
        if token is None:
            return
        given = await TOKEN_HEADER(request)
        if given is None or not hmac.compare_digest(given.encode(), token.encode()):
            raise ApiError(401, "HTTPUnauthorized", "X-Auth-Token: a valid token is required.")

    for collection, member, create, update, prefix in RESOURCES:
        add_resource_routes(app, service, collection, member, create, update, prefix, authenticate)

    @app.get("/v2.0/srfabric/fabric", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def fabric() -> dict[str, Any]:
        """What the controller discovered (an srfabric extension): switches, links and hosts."""
        return {"fabric": service.fabric_view()}

    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> JSONResponse:
        return JSONResponse(error.body(), status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        first = error.errors()[0] if error.errors() else {}
        where = [str(p) for p in first.get("loc", ())]
        if where and where[0] in ("path", "query"):
            message = f"Invalid input for {where[-1]}. Reason: {first.get('msg', 'invalid')}."
        else:
            message = validation_message(first, request.method)
        return JSONResponse(neutron_error("HTTPBadRequest", message), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        kinds = {404: "HTTPNotFound", 405: "HTTPMethodNotAllowed"}
        return JSONResponse(neutron_error(kinds.get(error.status_code, "HTTPError"), str(error.detail)),
                            status_code=error.status_code)

    @app.exception_handler(Exception)
    async def internal(request: Request, error: Exception) -> JSONResponse:
        log.exception("request failed")
        return JSONResponse(neutron_error("HTTPInternalServerError", "Request Failed: internal server error while "
                                                                     "processing your request."), status_code=500)

    return app
