"""The API application: ``ResourceApp`` serves the resources, FastAPI the rest and the OpenAPI document."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from fastapi.security import APIKeyHeader
from starlette.exceptions import HTTPException as StarletteHTTPException

from srfabric.api.errors import ApiError, internal_error, neutron_error, validation_message
from srfabric.api.projects import TokenBook
from srfabric.api.resources.schemas import ScheduleUpdate, body
from srfabric.api.service import SfcService
from srfabric.api.streams.frer_counters import FrerReport, stream_ends
from srfabric.api.web import discovery, ui
from srfabric.api.web.dispatch import ResourceApp
from srfabric.api.web.routes import RESOURCES, documented_routes

log = logging.getLogger(__name__)
ScheduleBody = body("schedule", ScheduleUpdate)
FrerReportBody = body("report", FrerReport)
TOKEN_HEADER = APIKeyHeader(name="X-Auth-Token", auto_error=False, description="the token `srfabric serve` was given")


def create_app(service: SfcService, token: str | None, https: bool = False, book: TokenBook | None = None
               ) -> ResourceApp:
    """``token``: an admin's (None, without ``book``, turns authentication off: local use only); ``book``: every
    token with its project and role (``projects``); ``https``: served over TLS (the web view's cookie is then
    marked secure)."""
    book = book or TokenBook.single(token)
    app = FastAPI(title="srfabric", version="2.0",
                  description="OpenStack networking-sfc's API on srfabric's source-routed fabric.")
    authenticate, any_token, valid = token_checks(book)
    add_openapi(app, documented_routes(authenticate))
    add_metrics(app, service, book)
    add_discovery(app, any_token)
    add_schedule_routes(app, service, authenticate)
    add_frer_routes(app, service, authenticate)
    ui.add_ui_routes(app, service, authenticate, valid, secure=https)
    add_error_handlers(app)
    return ResourceApp(service, book, RESOURCES, app)


Check = Callable[[Request], Awaitable[None]]


def token_checks(book: TokenBook) -> tuple[Check, Check, Callable[[str | None], bool]]:
    """The admin's check, any valid token's check, and the web view's test of a token."""

    async def authenticate(request: Request) -> None:
        """The fabric view's check (``ResourceApp`` checks the resources); it also documents the header. A read
        may carry the token as the web view's cookie instead (``ui``)."""
        given = await TOKEN_HEADER(request)
        if given is None and request.method == "GET":
            given = request.cookies.get(ui.COOKIE)
        book.admin(None if given is None else given.encode())

    async def any_token(request: Request) -> None:
        """Discovery is for every valid token, a member's too."""
        given = await TOKEN_HEADER(request)
        book.who(None if given is None else given.encode())

    def valid(token: str | None) -> bool:
        try:
            book.admin(None if token is None else token.encode())
        except ApiError:
            return False
        return True

    return authenticate, any_token, valid


def add_openapi(app: FastAPI, documented: list[Any]) -> None:
    """The OpenAPI document: the resources' declared routes beside the app's own."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = get_openapi(title=app.title, version=app.version, description=app.description,
                                             routes=[*documented, *app.routes])
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def add_metrics(app: FastAPI, service: SfcService, book: TokenBook) -> None:
    """``/metrics`` in Prometheus' text format."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    from srfabric.api.metrics import FabricCollector

    registry = CollectorRegistry(auto_describe=False)
    registry.register(FabricCollector(service))

    @app.get("/metrics", tags=["operations"], response_class=Response)
    async def metrics(request: Request) -> Response:
        """Prometheus' text format (``metrics``); the token as X-Auth-Token or as a bearer token, as Prometheus'
        ``authorization`` setting sends it."""
        given = request.headers.get("x-auth-token")
        bearer = request.headers.get("authorization", "")
        if given is None and bearer.lower().startswith("bearer "):
            given = bearer[7:].strip()
        book.admin(None if given is None else given.encode())
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


def add_discovery(app: FastAPI, any_token: Check) -> None:
    """Neutron's discovery: versions, the v2.0 index, extensions."""

    @app.get("/", tags=["discovery"])
    async def api_versions(request: Request) -> dict[str, Any]:
        """The API versions, as Neutron lists them (no token needed)."""
        return discovery.versions(str(request.base_url))

    @app.get("/v2.0/", tags=["discovery"], dependencies=[Depends(any_token)])
    async def api_index(request: Request) -> dict[str, Any]:
        """The core resources of v2.0."""
        return discovery.index(str(request.base_url))

    @app.get("/v2.0/extensions", tags=["discovery"], dependencies=[Depends(any_token)])
    async def list_extensions() -> dict[str, Any]:
        """The extensions by alias: networking-sfc's ``flow_classifier``, ``sfc``, ``sfc_graphs``, and
        ``srfabric``."""
        return discovery.extensions()

    @app.get("/v2.0/extensions/{alias}", tags=["discovery"], dependencies=[Depends(any_token)])
    async def show_extension(alias: str) -> dict[str, Any]:
        """One extension; 404 for an alias srfabric does not implement."""
        return discovery.extension(alias)


def add_schedule_routes(app: FastAPI, service: SfcService, authenticate: Check) -> None:
    """srfabric's extension: the fabric view and the streams' schedule (show, re-schedule, re-optimise)."""

    @app.get("/v2.0/srfabric/fabric", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def fabric() -> dict[str, Any]:
        """What the controller discovered (an srfabric extension): switches, links and hosts."""
        return {"fabric": service.fabric_view()}

    @app.get("/v2.0/srfabric/schedule", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def schedule() -> dict[str, Any]:
        """The time-sensitive streams' slot grid, each stream's slot and offset, and every gated port's
        gate control list (as a taprio command and as 802.1Qcw YANG), with what the last change sent."""
        return {"schedule": service.streams.view()}

    @app.put("/v2.0/srfabric/schedule", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def reschedule(request: ScheduleBody) -> dict[str, Any]:  # type: ignore[valid-type]
        """Re-schedule: open the time-triggered class for ``duty_percent`` of every base period on every gated
        port (null: in the streams' slots only). All ports switch at one common future base time; no flow
        entry is sent. 409 when an admitted stream's slot lies outside the new window."""
        await service.reschedule(request.schedule.duty_percent)  # type: ignore[attr-defined]
        return {"schedule": service.streams.view()}

    @app.post("/v2.0/srfabric/schedule/reoptimise", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def reoptimise() -> dict[str, Any]:
        """Re-optimise on demand: S/PR re-solves every admitted stream's slot and path with all of them kept,
        on as few links as possible (then as few changes as possible). Moved streams' talkers' edges get
        entries; every gated port switches at one common future base time; ``last_change.moved_streams``
        names the moved streams (empty: the schedule was already as good, and nothing was sent)."""
        await service.reoptimise()
        return {"schedule": service.streams.view()}


def add_frer_routes(app: FastAPI, service: SfcService, authenticate: Check) -> None:
    """802.1CB eliminators' reports in, their counters out."""

    @app.post("/v2.0/srfabric/frer/reports", tags=["srfabric"], dependencies=[Depends(authenticate)],
              status_code=201)
    async def frer_report(request: FrerReportBody) -> dict[str, Any]:  # type: ignore[valid-type]
        """An end-system eliminator's counters (IEEE 802.1CB sequence recovery, ``srfabric frer eliminate``):
        kept as the interface's newest; answers how many of its streams are admitted streams."""
        report: FrerReport = request.report  # type: ignore[attr-defined]
        service.streams.frer.keep(report)
        ends = stream_ends(list(service.snapshot["streams"].values()), service.snapshot["ports"])
        matched = sum(1 for seen in report.streams if any(end.matches(seen) for end in ends))
        return {"report": {"interface": report.interface, "streams": len(report.streams), "matched": matched}}

    @app.get("/v2.0/srfabric/frer", tags=["srfabric"], dependencies=[Depends(authenticate)])
    async def frer() -> dict[str, Any]:
        """The eliminators' newest counters and settings in ``ieee802-dot1cb-frer``'s terms (per-port-per-stream
        counters, sequence recovery), handles being the streams' ``stream_id``."""
        snapshot = service.snapshot
        return service.streams.frer.document(stream_ends(list(snapshot["streams"].values()), snapshot["ports"]))


def add_error_handlers(app: FastAPI) -> None:
    """Every error as Neutron's body: ours, validation, routing, and anything unforeseen (logged, 500)."""

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
        failure = internal_error()
        return JSONResponse(failure.body(), status_code=failure.status)
