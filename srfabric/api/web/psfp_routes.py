"""Per-stream filtering and policing (802.1Qci) in the API: each edge's filters, gates and meters as its YANG
document (with the counters it last reported as state), and the edges' reports in."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from srfabric.api.errors import ApiError, in_use, not_found, not_leader
from srfabric.api.resources.schemas import body
from srfabric.api.service import SfcService
from srfabric.api.streams.psfp_book import PsfpReport
from srfabric.api.web.dispatch import request_body
from srfabric.api.web.router import Route
from srfabric.controller.stream_protection import EdgePlans, edge_protections
from srfabric.errors import ModelError

PsfpReportBody = body("report", PsfpReport)


def edge_plans(service: SfcService) -> EdgePlans:
    """What every edge should hold now: the installed time-triggered streams at the gates' base time (none while
    no port is gated)."""
    streams = service.streams
    if not streams.gcls:
        return {}
    try:
        planner = streams.planner()
    except ApiError:
        return {}  # a fabric the scheduler cannot use protects nothing; the schedule view says why
    controller = streams.controller
    return edge_protections(planner, controller.fabric, controller.port_name, controller.core.streams,
                            streams.gcls[0].base_time_ns, streams.psfp.tolerance_ns)


def on_the_leader(service: SfcService) -> None:
    """Only the leader installs streams, so only it knows what the edges should hold, and only it keeps their
    reports: a follower sends an edge there (307; 503 while none is elected), never an empty document that would
    take every protection off."""
    leader = service.leader_elsewhere()
    if leader is not None:
        raise not_leader(leader)


def psfp_routes(service: SfcService) -> list[Route]:
    """The edges' documents out, their counters in."""

    async def edges(request: Request, _: str | None) -> dict[str, Any]:
        book = service.streams.psfp
        return {"edges": [{"bridge": bridge, "streams": sorted(plan.handle for plan in plans),
                           "reported_at": book.reported_at(bridge)}
                          for bridge, (plans, _) in sorted(edge_plans(service).items())]}

    async def edge(request: Request, bridge: str | None) -> dict[str, Any]:
        on_the_leader(service)
        name = bridge or ""
        plans, ports = edge_plans(service).get(name, ([], {}))
        if not plans and name not in service.controller.fabric.dpids_by_name():
            raise not_found("SwitchNotFound", "switch", name)
        try:
            return service.streams.psfp.document(name, plans, ports)
        except ModelError as error:  # a stream whose gate the edge cannot hold: named, not a 500
            raise in_use("PsfpUnfit", f"{name}: {error}") from None

    async def report(request: Request, _: str | None) -> dict[str, Any]:
        on_the_leader(service)
        got: PsfpReport = (await request_body(request, PsfpReportBody)).report
        service.streams.psfp.keep(got)
        plans = edge_plans(service).get(got.bridge, ([], {}))[0]
        admitted = {plan.handle for plan in plans}
        return {"report": {"bridge": got.bridge, "streams": len(got.streams),
                           "matched": sum(1 for seen in got.streams if seen.handle in admitted)}}

    return [
        Route("GET", "/v2.0/srfabric/psfp", edges, name="psfp_edges",
              summary="Each edge switch that protects admitted streams (IEEE 802.1Qci): their handles (the streams' "
                      "``stream_id``) and when the edge last reported its counters."),
        Route("GET", "/v2.0/srfabric/psfp/{bridge}", edge, name="psfp_edge",
              summary="One edge's stream identities, filters, gates and meters as RFC 7951 JSON "
                      "(``ieee802-dot1q-psfp-bridge``, ``ieee802-dot1cb-stream-identification``), each filter with "
                      "the counters the edge last reported; 404 for a switch the controller does not know; 307 to "
                      "the leader from a follower."),
        Route("POST", "/v2.0/srfabric/psfp/reports", report, status=201, body=PsfpReportBody, name="psfp_report",
              summary="An edge's per-stream counters (``srfabric psfp follow``): kept as its newest; answers how "
                      "many of its streams are admitted there."),
    ]
