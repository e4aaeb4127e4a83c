"""Per-stream filtering and policing over NETCONF, validated by the bridge's own server: ``srfabric bridge serve``
(Debian's netconfd with the pinned 802.1Qci modules, ``ieee802-dot1q-psfp`` rewritten as ``yang_inline`` says,
srfabric's SIL and agent, its own sshd), reached over SSH. An edge's document goes in as one confirmed commit and
reads back as sent (the API's document for an admitted stream too); a stream gone from the edge goes from the
bridge; a gate list longer than the bridge's
``supported-list-max`` is refused by the bridge, naming the limit, and the bridge keeps what it held."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from srfabric.api.web.psfp_routes import edge_plans
from srfabric.errors import ModelError
from srfabric.rules.yang.psfp_document import ROOMY, psfp_document
from srfabric.rules.yang.xml_document import namespace
from srfabric.southbound.netconf.psfp import held_streams, push_psfp
from srfabric.southbound.netconf.session import BridgeSession
from srfabric_tools.netconf_lab.bridges import BridgeLab
from tests.integration.tsn.test_netconf_bridges import fig1_ports, service_over
from tests.unit.api.test_streams_service import host_ports, stream
from tests.unit.tsn.test_psfp import PORTS
from tests.unit.tsn.test_psfp import edge_plans as fig1_plans

pytestmark = pytest.mark.timeout(300)
PSFP = "{" + namespace("ieee802-dot1q-psfp-bridge") + "}"
GATES = (f'<bridges xmlns="{namespace("ieee802-dot1q-bridge")}"><bridge><component><stream-gates '
         f'xmlns="{namespace("ieee802-dot1q-psfp-bridge")}"/></component></bridge></bridges>')


@pytest.fixture
def session(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[BridgeSession]:
    list_max = getattr(request, "param", 256)
    with BridgeLab({"s1": sorted(PORTS.values())}, tmp_path / "bridges", list_max=list_max) as lab:
        opened = BridgeSession(lab.access()["s1"])
        try:
            yield opened
        finally:
            opened.close()


def gate_lists(session: BridgeSession) -> dict[int, int]:
    """Each stream gate the bridge runs, by id: how many entries its admin list has."""
    reply = session.call("get-config", lambda s: s.get_config("running", filter=("subtree", GATES)).data_xml)
    root = ElementTree.fromstring(reply)
    return {int(gate.findtext(f"{PSFP}stream-gate-instance-id") or -1):
            len(gate.findall(f"{PSFP}admin-control-list/{PSFP}gate-control-entry"))
            for gate in root.iter(f"{PSFP}stream-gate-instance-table")}


def test_an_edges_document_is_committed_read_back_and_its_gone_stream_removed(session: BridgeSession) -> None:
    plans = fig1_plans()
    done = push_psfp(session, psfp_document("s1", "00-00-00-00-00-01", plans, PORTS, ROOMY), confirm_timeout_s=20)
    assert done.streams == sorted(plan.handle for plan in plans) and not done.removed
    assert held_streams(session, "s1").handles == {plan.handle for plan in plans}
    assert gate_lists(session) == {plan.handle: len(plan.gate.intervals) for plan in plans}
    kept = plans[:-1]
    document = psfp_document("s1", "00-00-00-00-00-01", kept, PORTS, ROOMY)
    component = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
    for row in component["ieee802-dot1q-psfp-bridge:stream-filters"]["stream-filter-instance-table"]:
        row |= {"matching-frames-count": 9, "red-frames-count": 1}  # as the API shows it after a report
    done = push_psfp(session, document, confirm_timeout_s=20)
    assert done.removed == [plans[-1].handle]
    held = held_streams(session, "s1")
    assert held.handles == {plan.handle for plan in kept}
    assert list(held.tables.values()) == [{plan.handle for plan in kept}] * 3  # meters, filters and gates
    assert gate_lists(session) == {plan.handle: len(plan.gate.intervals) for plan in kept}


@pytest.mark.parametrize("session", [2], indirect=True)
def test_a_gate_list_over_the_bridges_limit_is_refused_by_its_server_and_changes_nothing(
        session: BridgeSession) -> None:
    plans = [plan for plan in fig1_plans() if len(plan.gate.intervals) > 2]
    assert plans, "the edge's plans should have a gate list of more than two entries"
    with pytest.raises(ModelError, match="supported-list-max"):
        push_psfp(session, psfp_document("s1", "00-00-00-00-00-01", plans, PORTS, ROOMY), confirm_timeout_s=20)
    assert held_streams(session, "s1").handles == set() and gate_lists(session) == {}


def test_an_admitted_streams_protection_as_the_api_gives_it_is_taken_by_its_edges_bridge(tmp_path: Path) -> None:
    with BridgeLab(fig1_ports(), tmp_path / "fig1") as lab:
        service, gates = service_over(lab, tmp_path)

        async def admit() -> None:
            await service.start()
            await service.create("streams", stream(await host_ports(service), period_ns=1_000_000))

        asyncio.run(admit())
        [(edge, (plans, ports))] = edge_plans(service).items()
        session = BridgeSession(lab.access()[edge])
        try:
            push_psfp(session, service.streams.psfp.document(edge, plans, ports), confirm_timeout_s=20)
            assert held_streams(session, edge).handles == {plan.handle for plan in plans}
            assert gate_lists(session) == {plan.handle: len(plan.gate.intervals) for plan in plans}
        finally:
            session.close()
            gates.close()
