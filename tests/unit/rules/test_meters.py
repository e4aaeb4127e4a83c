"""A time-triggered stream policed by an OpenFlow meter (``serve --psfp-meters``): its edge entry goes through the
meter first; the meter is set before the entry that uses it, changed when its settings change, and deleted once
no entry uses it; a switch without meters (the XDP agent) refuses such an entry by name."""

from __future__ import annotations

import asyncio
import struct
from dataclasses import replace

import pytest
from os_ken.ofproto import ofproto_parser
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.controller.reconcile import Reconciler
from srfabric.controller.taking import read_meters
from srfabric.errors import ModelError
from srfabric.model.stream import SteeredStream
from srfabric.model.topo import tsn_fig1
from srfabric.rules.codec_rules import rules_for
from srfabric.rules.entries import FlowEntry, Meter, Output, ipv4_number, match
from srfabric.rules.openflow.ofbind import PROTOCOL, bind_action, flow_add, meter_mod
from srfabric.rules.openflow.wire import pack_flow_add
from srfabric.rules.streams.steering import stream_entries
from srfabric.southbound.channel import SwitchError
from srfabric.xdp.of_messages import UnsupportedInstruction, parse_flow_mod
from srfabric_tools.simulate import FakeSwitch, Packet


def parsed(msg: object) -> object:
    msg.serialize()  # type: ignore[attr-defined]
    raw = bytes(msg.buf)  # type: ignore[attr-defined]
    return ofproto_parser.msg(PROTOCOL, ofp.OFP_VERSION, raw[1], len(raw), 0, raw)


def metered(rate: int = 1000, out: int = 2) -> FlowEntry:
    return FlowEntry(1, 300, match(in_port=1, eth_type=0x0800), (Meter(12, rate, 2), Output(out)))


def test_a_metered_entry_sends_its_meter_as_the_first_instruction_by_hand_and_by_os_ken() -> None:
    by_hand, by_os_ken = pack_flow_add(metered()), flow_add(metered())
    by_os_ken.serialize()
    assert by_hand is not None and bytes(by_hand.buf) == bytes(by_os_ken.buf)
    instructions = parsed(flow_add(metered())).instructions  # type: ignore[attr-defined]
    assert isinstance(instructions[0], parser.OFPInstructionMeter) and instructions[0].meter_id == 12
    assert [type(a) for a in instructions[1].actions] == [parser.OFPActionOutput]


def test_the_meter_mod_carries_the_rate_in_frames_a_second_and_the_bucket() -> None:
    msg = meter_mod(Meter(12, 334, 2))
    msg.serialize()
    # ofp_meter_mod (OpenFlow 1.3.5 7.3.4.5), which os-ken builds but does not parse: command, flags, id, one band
    command, flags, meter_id, band, length, rate, burst = struct.unpack_from("!HHIHHII", msg.buf, 8)
    assert (command, meter_id, band, length, rate, burst) == (ofp.OFPMC_ADD, 12, ofp.OFPMBT_DROP, 16, 334, 2)
    assert flags == ofp.OFPMF_PKTPS | ofp.OFPMF_BURST | ofp.OFPMF_STATS


def test_a_meter_is_refused_anywhere_but_first_and_out_of_range() -> None:
    with pytest.raises(ModelError, match="first action"):
        bind_action(Meter(12, 1000, 2))
    with pytest.raises(ModelError, match="meter.rate_pps"):
        Meter(12, 0, 2)
    with pytest.raises(ModelError, match="meter.meter_id"):
        Meter(0xFFFF0001, 1, 2)


def kinds(messages: list[object]) -> list[str]:
    out = []
    for msg in messages:
        name = type(msg).__name__ if not hasattr(msg, "name") else msg.name  # type: ignore[attr-defined]
        command = getattr(msg, "command", None)
        out.append(f"{name}:{command}" if name == "OFPMeterMod" else name)
    return out


def test_a_sync_sets_the_meter_first_changes_it_in_place_and_deletes_it_last() -> None:
    reconciler = Reconciler()
    plain = FlowEntry(0, 100, match(in_port=2), (Output(1),))
    push = reconciler.plan(1, [plain, metered()], [])
    assert push is not None
    assert kinds(push.messages)[0] == f"OFPMeterMod:{ofp.OFPMC_ADD}"
    reconciler.confirmed(push)
    assert reconciler.plan(1, [plain, metered()], []) is None  # nothing changed: nothing sent
    push = reconciler.plan(1, [plain, metered(rate=500)], [])  # the stream's period changed
    assert push is not None and kinds(push.messages) == [f"OFPMeterMod:{ofp.OFPMC_MODIFY}", "OFPFlowMod"]
    reconciler.confirmed(push)
    push = reconciler.plan(1, [plain], [])  # the stream is gone
    assert push is not None and kinds(push.messages) == ["OFPFlowMod", f"OFPMeterMod:{ofp.OFPMC_DELETE}"]
    reconciler.confirmed(push)
    assert reconciler.installed_meters[1] == set()


def test_a_meter_held_by_a_switch_but_used_by_no_entry_is_deleted_after_a_read_back() -> None:
    reconciler = Reconciler()
    reconciler.held(1, {}, {}, {40})
    push = reconciler.plan(1, [metered()], [])
    assert push is not None and kinds(push.messages) == [f"OFPMeterMod:{ofp.OFPMC_ADD}", "OFPFlowMod",
                                                         f"OFPMeterMod:{ofp.OFPMC_DELETE}"]


def test_a_policed_stream_goes_through_its_meter_at_its_talkers_edge_and_nowhere_else() -> None:
    fabric = tsn_fig1().to_fabric()
    stream = SteeredStream("cam", 12, "h1", "h3", ("s1", "s2", "s5"), udp_dst=5001, meter=(1000, 2))
    [(dpid, entry)] = stream_entries(fabric, stream, rules_for("mac-nibble"), set(fabric.switches), 6)
    assert dpid == fabric.hosts["h1"].dpid and entry.actions[0] == Meter(12, 1000, 2)
    h1, h3 = fabric.hosts["h1"], fabric.hosts["h3"]
    frame = Packet(eth_src=h1.mac, eth_dst=h3.mac, eth_type=0x0800, ipv4_src=ipv4_number(h1.ip),
                   ipv4_dst=ipv4_number(h3.ip), ip_proto=17, tp_dst=5001)
    result = FakeSwitch([replace(entry, table=0)]).process(frame, h1.port)  # the host-in table, looked up first
    assert result.metered == [12] and len(result.outputs) == 1
    with pytest.raises(ModelError, match="meter"):
        SteeredStream("cam", 12, "h1", "h3", ("s1",), meter=(0, 2))


def test_a_switch_without_meters_refuses_a_metered_entry_by_name() -> None:
    msg = flow_add(metered())
    msg.set_xid(1)
    msg.serialize()
    with pytest.raises(UnsupportedInstruction, match="meter 12"):
        parse_flow_mod(bytes(msg.buf))


class MeterlessSwitch:
    """A connection whose meter read-back is refused (``refused`` set) or goes unanswered (not set)."""

    def __init__(self, refused: tuple[int, int] | None) -> None:
        self.refused, self.dpid, self.sent, self.barriers = refused, 1, [], 0

    async def meter_config(self) -> list[object]:
        error = SwitchError("switch", "no answer" if self.refused is None else "refused")
        error.refused = self.refused
        raise error

    def send(self, msg: object) -> None:
        self.sent.append(msg)

    async def barrier(self) -> None:
        self.barriers += 1


def test_a_switch_without_meters_holds_none_and_unreadable_meters_are_deleted() -> None:
    refusing = MeterlessSwitch((ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_MULTIPART))  # the XDP agent
    assert asyncio.run(read_meters(refusing)) == set() and refusing.sent == []  # type: ignore[arg-type]
    silent = MeterlessSwitch(None)
    assert asyncio.run(read_meters(silent)) == set()  # type: ignore[arg-type]
    [deleted] = silent.sent
    assert (deleted.command, deleted.meter_id, silent.barriers) == (ofp.OFPMC_DELETE, ofp.OFPM_ALL, 1)
