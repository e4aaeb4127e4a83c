"""faucet under ``bench capacity``: the emulated switches send what faucet's own pipeline sends up (os-ken's
parser reads it so), each emulated switch is one faucet datapath, and a flow's source port is varied where its
tagged frame holds it."""

from __future__ import annotations

import struct

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.model.topo import fat_tree
from srfabric.rules.openflow.wire import HEADER
from srfabric_tools.bench.capacity_faucet import ETH_SRC_TABLE, FAUCET_COOKIE, VLAN, FaucetFabric, faucet_config
from srfabric_tools.bench.of_emulator import EmulatedFabric, Tally, flow_key


def read(raw: bytes) -> parser.OFPPacketIn:
    version, kind, length, xid = HEADER.unpack_from(raw)
    return parser.OFPPacketIn.parser(None, version, kind, length, xid, raw)


def test_a_packet_in_reads_as_one_from_faucets_eth_src_table() -> None:
    frame = bytes(range(12)) + b"\x08\x00" + b"payload"
    msg = read(FaucetFabric(fat_tree(4)).packet_in_of(3, frame))
    assert (msg.cookie, msg.reason, msg.table_id, msg.match["in_port"]) == (
        FAUCET_COOKIE, ofp.OFPR_ACTION, ETH_SRC_TABLE, 3)
    assert bytes(msg.data) == frame[:12] + struct.pack("!HH", 0x8100, VLAN) + frame[12:]


class Captured:
    """Stands in for a connected switch: keeps what the generator writes to it."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)


def test_new_flows_vary_the_source_port_inside_the_tagged_frame() -> None:
    for fabric in (EmulatedFabric(fat_tree(4)), FaucetFabric(fat_tree(4))):
        fabric.switches = {name: Captured() for name in fabric.spec.switches}  # type: ignore[misc]
        fabric.tally = Tally()
        fabric.new_flows(40)
        frames = []
        for captured in fabric.switches.values():
            for batch in captured.written:  # type: ignore[attr-defined]
                while batch:
                    _, _, length, _ = HEADER.unpack_from(batch)
                    frames.append(bytes(read(batch[:length]).data))
                    batch = batch[length:]
        untagged = [frame[:12] + frame[16:] if frame[12:14] == b"\x81\x00" else frame for frame in frames]
        assert len(frames) == 40 and {flow_key(frame) for frame in untagged} == set(fabric.tally.sent)


def test_every_emulated_switch_is_a_faucet_datapath_with_its_ports() -> None:
    fabric = EmulatedFabric(fat_tree(4))
    config = faucet_config(fabric)
    assert config.count("dp_id:") == len(fabric.spec.switches) == 20
    assert config.count("native_vlan:") == sum(len(fabric.port_desc(name)) for name in fabric.spec.switches)
