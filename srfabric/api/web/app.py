"""The API application: one router. ``ResourceApp`` serves the resources (declared in ``resources.kinds``) and the
routes declared here (``web.router``): metrics, discovery, srfabric's fabric view, schedule and FRER counters,
and the web view (``ui``). The OpenAPI document is generated from the same declarations (``openapi``).

FastAPI served the routes other than the resources until issue 59: two routers, each request walking FastAPI's
route list twice and six middleware layers when it was not a resource. One table of routes found by two
dictionary lookups keeps the resources' speed for every route, so FastAPI now only writes the OpenAPI document.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from srfabric.api.errors import not_leader
from srfabric.api.projects import TokenBook
from srfabric.api.resources.schemas import BridgeManagement, ScheduleUpdate, body
from srfabric.api.service import SfcService
from srfabric.api.streams.bridge_book import BridgeBook, bridge_view, not_netconf
from srfabric.api.streams.frer_counters import FrerReport, stream_ends
from srfabric.api.web import discovery, ui
from srfabric.api.web.dispatch import ResourceApp, read_json, request_body
from srfabric.api.web.openapi import OpenApi
from srfabric.api.web.psfp_routes import psfp_routes
from srfabric.api.web.router import Route, Routes, json_bytes
from srfabric.api.web.routes import RESOURCES

log = logging.getLogger(__name__)
ScheduleBody = body("schedule", ScheduleUpdate)
FrerReportBody = body("report", FrerReport)
BridgeBody = body("bridge", BridgeManagement)


def create_app(service: SfcService, token: str | None, https: bool = False, book: TokenBook | None = None,
               bridges: BridgeBook | None = None) -> ResourceApp:
    """``token``: an admin's (None, without ``book``, turns authentication off: local use only); ``book``: every
    token with its project and role (``projects``); ``https``: served over TLS (the web view's cookie is then
    marked secure); ``bridges``: the TSN bridges' NETCONF access, when the API may write it."""
    book = book or TokenBook.single(token)
    declared = [*metrics_routes(service, book), *discovery_routes(), *schedule_routes(service),
                *frer_routes(service), *psfp_routes(service), *bridge_routes(service, bridges),
                *ui.ui_routes(service, book, secure=https)]
    document = OpenApi(declared)
    return ResourceApp(service, book, RESOURCES, Routes([*declared, document.route()]), document.build)


def metrics_routes(service: SfcService, book: TokenBook) -> list[Route]:
    """``/metrics`` in Prometheus' text format."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    from srfabric.api.metrics import FabricCollector

    registry = CollectorRegistry(auto_describe=False)
    registry.register(FabricCollector(service))

    async def metrics(request: Request, _: str | None) -> Response:
        given = request.headers.get("x-auth-token")
        bearer = request.headers.get("authorization", "")
        if given is None and bearer.lower().startswith("bearer "):
            given = bearer[7:].strip()
        book.admin(None if given is None else given.encode())
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return [Route("GET", "/metrics", metrics, auth="none", tags=("operations",), answers="text", name="metrics",
                  summary="Prometheus' text format (``metrics``); the token as X-Auth-Token or as a bearer token, "
                          "as Prometheus' ``authorization`` setting sends it.")]


def discovery_routes() -> list[Route]:
    """Neutron's discovery: versions (no token), the v2.0 index and the extensions (any valid token)."""

    async def api_versions(request: Request, _: str | None) -> dict[str, Any]:
        return discovery.versions(str(request.base_url))

    async def api_index(request: Request, _: str | None) -> dict[str, Any]:
        return discovery.index(str(request.base_url))

    async def list_extensions(request: Request, _: str | None) -> dict[str, Any]:
        return discovery.extensions()

    async def show_extension(request: Request, alias: str | None) -> dict[str, Any]:
        return discovery.extension(alias or "")

    tags = ("discovery",)
    return [
        Route("GET", "/", api_versions, auth="none", tags=tags, name="api_versions",
              summary="The API versions, as Neutron lists them (no token needed)."),
        Route("GET", "/v2.0/", api_index, auth="any", tags=tags, name="api_index",
              summary="The core resources of v2.0."),
        Route("GET", "/v2.0/extensions", list_extensions, auth="any", tags=tags, name="list_extensions",
              summary="The extensions by alias: networking-sfc's ``flow_classifier``, ``sfc``, ``sfc_graphs``, "
                      "and ``srfabric``."),
        Route("GET", "/v2.0/extensions/{alias}", show_extension, auth="any", tags=tags, name="show_extension",
              summary="One extension; 404 for an alias srfabric does not implement."),
    ]


def schedule_routes(service: SfcService) -> list[Route]:
    """srfabric's extension: the fabric view and the streams' schedule (show, re-schedule, re-optimise)."""

    async def fabric(request: Request, _: str | None) -> dict[str, Any]:
        return {"fabric": service.fabric_view()}

    async def schedule(request: Request, _: str | None) -> dict[str, Any]:
        return {"schedule": service.streams.view()}

    async def reschedule(request: Request, _: str | None) -> dict[str, Any]:
        asked = await request_body(request, ScheduleBody)
        await service.reschedule(asked.schedule.duty_percent)
        return {"schedule": service.streams.view()}

    async def reoptimise(request: Request, _: str | None) -> dict[str, Any]:
        await service.reoptimise()
        return {"schedule": service.streams.view()}

    return [
        Route("GET", "/v2.0/srfabric/fabric", fabric, name="fabric",
              summary="What the controller discovered (an srfabric extension): switches, links and hosts."),
        Route("GET", "/v2.0/srfabric/schedule", schedule, name="schedule",
              summary="The time-sensitive streams' slot grid, each stream's slot and offset, and every gated "
                      "port's gate control list (as a taprio command and as 802.1Qcw YANG), with what the last "
                      "change sent."),
        Route("PUT", "/v2.0/srfabric/schedule", reschedule, body=ScheduleBody, name="reschedule",
              summary="Re-schedule: open the time-triggered class for ``duty_percent`` of every base period on "
                      "every gated port (null: in the streams' slots only), all ports at one common future base "
                      "time, no flow entry sent; 409 when an admitted stream's slot lies outside the new window."),
        Route("POST", "/v2.0/srfabric/schedule/reoptimise", reoptimise, name="reoptimise",
              summary="Re-optimise on demand: S/PR re-solves every admitted stream's slot and path with all of "
                      "them kept, on as few links as possible; ``last_change.moved_streams`` names the moved ones."),
    ]


def frer_routes(service: SfcService) -> list[Route]:
    """802.1CB eliminators' reports in, their counters out."""

    async def frer_report(request: Request, _: str | None) -> dict[str, Any]:
        report: FrerReport = (await request_body(request, FrerReportBody)).report
        service.streams.frer.keep(report)
        ends = stream_ends(list(service.snapshot["streams"].values()), service.snapshot["ports"])
        matched = sum(1 for seen in report.streams if any(end.matches(seen) for end in ends))
        return {"report": {"interface": report.interface, "streams": len(report.streams), "matched": matched}}

    async def frer(request: Request, _: str | None) -> dict[str, Any]:
        snapshot = service.snapshot
        return service.streams.frer.document(stream_ends(list(snapshot["streams"].values()), snapshot["ports"]))

    return [
        Route("POST", "/v2.0/srfabric/frer/reports", frer_report, status=201, body=FrerReportBody, name="frer_report",
              summary="An end-system eliminator's counters (IEEE 802.1CB sequence recovery, ``srfabric frer "
                      "eliminate``): kept as the interface's newest; answers how many of its streams are admitted."),
        Route("GET", "/v2.0/srfabric/frer", frer, name="frer",
              summary="The eliminators' newest counters and settings in ``ieee802-dot1cb-frer``'s terms, handles "
                      "being the streams' ``stream_id``."),
    ]


def bridge_routes(service: SfcService, bridges: BridgeBook | None) -> list[Route]:
    """The TSN bridges srfabric gates over NETCONF: shown always, written with ``--gates netconf --bridges``."""

    def writable() -> BridgeBook:
        leader = service.leader_elsewhere()
        if leader is not None:
            raise not_leader(leader)
        if bridges is None:
            raise not_netconf()
        return bridges

    async def list_bridges(request: Request, _: str | None) -> dict[str, Any]:
        return bridge_view(service)

    async def show_bridge(request: Request, name: str | None) -> dict[str, Any]:
        return bridge_view(service, name or "")

    async def put_bridge(request: Request, name: str | None) -> Response:
        book = writable()
        entry = read_json(await request.body(), request.headers.get("content-type", "").encode() or None)
        status, content = await book.put(name or "", entry)
        return Response(json_bytes(content), status, media_type="application/json")

    async def delete_bridge(request: Request, name: str | None) -> Response:
        await writable().delete(name or "")
        return Response(status_code=204)

    member = "/v2.0/srfabric/bridges/{name}"
    return [
        Route("GET", "/v2.0/srfabric/bridges", list_bridges, name="list_bridges",
              summary="Each TSN bridge: its 802.1Qcw scheduler capabilities, its NETCONF address and user (never "
                      "its password or key), and whether it waits for a schedule it lost."),
        Route("GET", member, show_bridge, name="show_bridge", summary="One bridge; 404 when it is not known."),
        Route("PUT", member, put_bridge, body=BridgeBody, name="put_bridge",
              summary="Add a bridge (201) or change how it is reached (200), kept in the bridges file; its "
                      "capabilities are read at the watch's next pass (until then its own validation guards), and "
                      "the lists it runs are sent to it again if its server lacks them. 409 without ``--gates "
                      "netconf --bridges``."),
        Route("DELETE", member, delete_bridge, status=204, name="delete_bridge",
              summary="Forget a bridge; 409 while it runs the gate lists of admitted streams."),
    ]
