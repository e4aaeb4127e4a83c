"""Per-stream filtering and policing: every admitted stream's gate opens exactly where its talker may send, a
talker that keeps its reservation loses no frame, a babbler gets through no more than its reservation, and the
bridge's document of filters, gates and meters passes ``yanglint`` against the pinned 802.1 modules."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srfabric.errors import ModelError
from srfabric.model.topo import tsn_fig1
from srfabric.rules.yang.psfp_document import ROOMY, psfp_document
from srfabric.rules.yang.xml_document import to_xml
from srfabric.tsn.model.network import Stream
from srfabric.tsn.protect.admitted import admitted_protections
from srfabric.tsn.protect.policing import GATE_CLOSED, OVERSIZE, StreamPolicer
from srfabric.tsn.protect.psfp import Identity, StreamProtection, Timing, stream_gate
from srfabric.tsn.runtime.live import LivePlanner, network_from_fabric
from tests.unit.tsn.test_yang_documents import YANG

MODULES = ("ietf-interfaces@2018-02-20", "iana-if-type@2014-05-08", "ieee802-dot1q-bridge@2023-10-26",
           "ieee802-dot1q-stream-filters-gates-bridge@2023-07-03", "ieee802-dot1q-psfp@2023-10-26",
           "ieee802-dot1q-psfp-bridge@2023-10-26",
           "ieee802-dot1cb-stream-identification@2021-12-08")
BASE_TIME = 1_700_000_000_000_000_000
PORTS = {"h1": "s1-eth1", "h2": "s1-eth2"}


def planned(tolerance_ns: int = 0) -> tuple[LivePlanner, list[StreamProtection]]:
    planner = LivePlanner(network_from_fabric(tsn_fig1().to_fabric()))
    asks = [Stream("cam", "h1", "h3", 1_000_000, 200), Stream("arm", "h2", "h4", 2_000_000, 600),
            Stream("ctl", "h1", "h4", 4_000_000, 64)]
    for stream in asks:
        planner.admit(stream)
    identities = {s.id: Identity(f"10.0.0.{s.src[1:]}", f"10.0.0.{s.dst[1:]}", udp_dst=5000 + n)
                  for n, s in enumerate(asks)}
    plans = admitted_protections(planner, BASE_TIME, identities, {s.id: n + 1 for n, s in enumerate(asks)},
                                 tolerance_ns)
    return planner, plans


def test_each_gate_opens_in_the_streams_own_slots_and_nowhere_else() -> None:
    planner, plans = planned()
    for plan in plans:
        stream = planner.streams[plan.stream][0]
        offset = planner.offset_ns(plan.stream)
        cycle, period = plan.gate.cycle_ns, stream.period_ns
        sends = {BASE_TIME + offset + k * period for k in range(cycle // period)}
        for send in sends:
            assert plan.gate.is_open(send) and plan.gate.is_open(send + planner.slot_ns - 1)
            assert not plan.gate.is_open(send + planner.slot_ns)
        open_ns = sum(end - start for start, end in plan.gate.open_windows())
        assert open_ns == len(sends) * planner.slot_ns  # open in its own slots only
        assert not plan.gate.is_open(BASE_TIME - 1)  # a list not begun yet lets nothing through


def test_a_tolerance_widens_each_window_on_both_sides_even_across_the_cycles_end() -> None:
    gate = stream_gate([(0, 100)], 1000, 0)
    wide = stream_gate([(0 - 20, 100 + 20)], 1000, 0)
    assert [wide.is_open(t) for t in (980, 999, 0, 119, 120, 979)] == [True, True, True, True, False, False]
    assert not gate.is_open(990)


@settings(max_examples=60, deadline=None)
@given(jitter=st.lists(st.integers(0, 26_000), min_size=40, max_size=40))
def test_a_talker_that_keeps_its_reservation_loses_no_frame(jitter: list[int]) -> None:
    planner, plans = planned()
    for plan in plans:
        stream = planner.streams[plan.stream][0]
        edge = StreamPolicer(plan)
        first = BASE_TIME + planner.offset_ns(plan.stream)
        fates = [edge.offer(first + k * stream.period_ns + jitter[k], stream.size_bytes) for k in range(40)]
        assert fates == [None] * 40, plan.stream


@settings(max_examples=30, deadline=None)
@given(start=st.integers(0, 4_000_000), spacing=st.integers(10_000, 400_000))
def test_a_babbler_gets_through_no_more_than_its_reservation(start: int, spacing: int) -> None:
    _, plans = planned()
    plan = plans[0]  # "arm": 600 octets every 2 ms
    edge = StreamPolicer(plan)
    horizon = 40_000_000
    for at in range(BASE_TIME + start, BASE_TIME + start + horizon, spacing):
        edge.offer(at, 600)
    passed = edge.counters["passing-frames-count"] - edge.counters["red-frames-count"]
    assert passed <= horizon // 2_000_000 + 2  # the reservation over the horizon plus the bucket
    dropped = sum(edge.counters[name] for name in ("not-passing-frames-count", "red-frames-count"))
    assert dropped + passed == edge.counters["matching-frames-count"]


def test_an_oversized_frame_is_dropped_before_the_gate_and_counted_so() -> None:
    _, plans = planned()
    edge = StreamPolicer(plans[1])
    assert edge.offer(BASE_TIME, plans[1].max_sdu_bytes + 1) == OVERSIZE
    assert edge.offer(BASE_TIME + plans[1].gate.cycle_ns - 1, plans[1].max_sdu_bytes) == GATE_CLOSED
    assert edge.counters["not-passing-sdu-count"] == 1 and edge.counters["not-passing-frames-count"] == 1


def yanglint(text: str, tmp_path: Path, kind: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / ("document.xml" if text.startswith("<") else "document.json")
    path.write_text(text)
    return subprocess.run(["yanglint", "-p", str(YANG), "-t", kind, *(str(YANG / f"{m}.yang") for m in MODULES),
                           str(path)], capture_output=True, text=True, timeout=60)


def edge_plans() -> list[StreamProtection]:
    return [plan for plan in planned(tolerance_ns=2_000)[1] if plan.bridge == "s1"]


def with_bridge_state(document: dict[str, Any]) -> dict[str, Any]:
    """The bridge's whole datastore after the edit: the document beside the state leaves the bridge reports (its
    instance limits, which the published ``must`` statements compare the tables with, and its interfaces' own)."""
    for index, interface in enumerate(document["ietf-interfaces:interfaces"]["interface"], start=1):
        interface.update({"admin-status": "up", "oper-status": "up", "if-index": index,
                          "statistics": {"discontinuity-time": "2026-12-06T00:00:00Z"}})
    component = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
    for container, leaf in (("flow-meters", "max-flow-meter-instances"),
                            ("stream-filters", "max-stream-filter-instances"),
                            ("stream-gates", "max-stream-gate-instances")):
        component[f"ieee802-dot1q-psfp-bridge:{container}"][leaf] = 64
    for gate in component["ieee802-dot1q-psfp-bridge:stream-gates"]["stream-gate-instance-table"]:
        for name in ("control-list", "cycle-time", "base-time"):  # running: the base time has passed
            gate[f"oper-{name}"] = gate[f"admin-{name}"]
    return document


def test_the_edges_document_validates_against_the_pinned_modules(tmp_path: Path) -> None:
    document = psfp_document("s1", "00-00-00-00-00-01", edge_plans(), PORTS, ROOMY)
    done = yanglint(to_xml(document), tmp_path, "edit")  # the edit as NETCONF sends it
    assert done.returncode == 0 and "err" not in done.stderr.lower(), done.stderr
    done = yanglint(json.dumps(with_bridge_state(document)), tmp_path, "data")  # every must statement checked
    assert done.returncode == 0 and "err" not in done.stderr.lower(), done.stderr


def test_a_list_over_the_gates_capability_is_named_by_srfabric_and_refused_by_yanglint(tmp_path: Path) -> None:
    plans = edge_plans()
    small = replace(ROOMY, list_max=2)
    with pytest.raises(ModelError, match="supported-list-max: 9 entries, over the 2"):
        psfp_document("s1", "00-00-00-00-00-01", plans, PORTS, small)
    document = psfp_document("s1", "00-00-00-00-00-01", plans, PORTS, ROOMY)
    gates = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0][
        "ieee802-dot1q-psfp-bridge:stream-gates"]
    gates["supported-list-max"] = 2
    done = yanglint(json.dumps(with_bridge_state(document)), tmp_path, "data")
    assert done.returncode != 0 and "supported-list-max" in done.stderr


@pytest.mark.parametrize(("field", "make"), [
    ("tolerance_ns", lambda: Timing(27_036, 1_000_000, 4, 0, tolerance_ns=2_000_000)),
    ("burst_frames", lambda: Timing(27_036, 1_000_000, 4, 0, burst_frames=0)),
    ("udp_dst", lambda: Identity("10.0.0.1", "10.0.0.2", udp_dst=70_000)),
])
def test_bad_settings_are_refused_naming_the_field(field: str, make: object) -> None:
    with pytest.raises(ModelError, match=field):
        make()  # type: ignore[operator]


def test_a_plan_for_another_bridge_or_an_unknown_talker_is_named() -> None:
    plans = edge_plans()
    with pytest.raises(ModelError, match="its edge is s1, not s2"):
        psfp_document("s2", "00-00-00-00-00-02", plans, PORTS, ROOMY)
    with pytest.raises(ModelError, match="faces its talker h1"):
        psfp_document("s1", "00-00-00-00-00-01", plans, {"h2": "s1-eth2"}, ROOMY)


def test_linux_policer_takes_every_frame_of_the_streams_size() -> None:
    """The policer counts a frame over its ``mtu`` as an excess whatever the rate: it must hold the largest SDU
    with its MAC header and tag (the size filter before it drops what is larger)."""
    from srfabric.tsn.protect.tc import tc_commands

    for plan in planned()[1]:
        police = next(line for line in tc_commands([plan], "s1-eth1") if " police " in line)
        mtu = int(police.split(" mtu ")[1].split()[0])
        assert mtu >= plan.max_sdu_bytes + 18 and mtu >= 256, (plan.max_sdu_bytes, police)
