"""The faucet probe (``docs/results/capacity-faucet/probe.py``, run by hand) still offers faucet what its own
pipeline sends up, on the emulated fabric ``bench capacity`` uses: a refactor of that fabric must not leave the
committed probe unable to run again."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path
from types import ModuleType

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.bench.of_emulator import EmulatedFabric
from srfabric.model.topo import fat_tree
from srfabric.southbound.wire import HEADER

PROBE = Path(__file__).resolve().parents[2] / "docs" / "results" / "capacity-faucet" / "probe.py"


def probe_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("faucet_probe", PROBE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_probe_packet_in_reads_as_one_from_faucets_eth_src_table() -> None:
    probe = probe_module()
    frame = bytes(range(12)) + b"\x08\x00" + b"payload"
    raw = probe.tagged_packet_in(3, frame)
    version, kind, length, xid = HEADER.unpack_from(raw)
    msg = parser.OFPPacketIn.parser(None, version, kind, length, xid, raw)
    assert (msg.cookie, msg.reason, msg.table_id, msg.match["in_port"]) == (
        probe.FAUCET_COOKIE, ofp.OFPR_ACTION, probe.ETH_SRC_TABLE, 3)
    assert bytes(msg.data) == frame[:12] + struct.pack("!HH", 0x8100, probe.VLAN) + frame[12:]


def test_every_emulated_switch_is_a_faucet_datapath_with_its_ports() -> None:
    probe = probe_module()
    fabric = EmulatedFabric(fat_tree(4))
    config = probe.faucet_config(fabric)
    assert config.count("dp_id:") == len(fabric.spec.switches) == 20
    assert config.count("native_vlan:") == sum(len(fabric.port_desc(name)) for name in fabric.spec.switches)
