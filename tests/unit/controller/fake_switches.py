"""Switches made of the messages the decision core returns (faucet's ``FakeOFTable``, here): every message is
encoded to the bytes a switch would read, parsed back (``parse_flow_mod``, ``parse_group_mod``,
``parse_packet_out``) and applied to that switch's table; frames then walk the tables (``rules/simulate``), so
tests assert forwarding, not message counts."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.controller.core import ControllerCore
from srfabric.controller.outbox import Effects, Send
from srfabric.controller.reconcile import Push
from srfabric.model.fabric import Fabric
from srfabric.rules.entries import EntryKey, FlowEntry, GroupEntry
from srfabric.rules.tables import entry_order
from srfabric.xdp.of_messages import parse_flow_mod, parse_group_mod, parse_packet_out
from srfabric_tools.simulate import Packet, Walk, walk


def wire(msg: Any) -> bytes:
    """The bytes a switch reads for ``msg`` (an os-ken message or a packed one)."""
    msg.set_xid(1)
    msg.serialize()
    return bytes(msg.buf)


class FakeSwitches:
    """Each switch's flow table and groups, and the frames sent out of its ports (packet-outs)."""

    def __init__(self) -> None:
        self.tables: dict[int, dict[EntryKey, FlowEntry]] = defaultdict(dict)
        self.groups: dict[int, dict[int, GroupEntry]] = defaultdict(dict)
        self.frames: list[tuple[int, int, bytes]] = []  # (switch, port, frame) of every packet-out

    def apply(self, dpid: int, messages: Iterable[Any]) -> None:
        for msg in messages:
            raw = wire(msg)
            kind = raw[1]
            if kind == ofp.OFPT_FLOW_MOD:
                mod = parse_flow_mod(raw)
                assert mod.complete, f"an action of {mod.entry} did not survive the wire"
                if mod.command == ofp.OFPFC_ADD:
                    self.tables[dpid][mod.entry.key] = mod.entry
                elif mod.command == ofp.OFPFC_DELETE_STRICT:
                    self.tables[dpid].pop(mod.entry.key, None)
                else:
                    raise AssertionError(f"flow-mod command {mod.command} is not one the core sends")
            elif kind == ofp.OFPT_GROUP_MOD:
                group = parse_group_mod(raw)
                if group.command == ofp.OFPGC_DELETE:
                    self.groups[dpid].pop(group.group.group_id, None)
                else:
                    self.groups[dpid][group.group.group_id] = group.group
            elif kind == ofp.OFPT_PACKET_OUT:
                out = parse_packet_out(raw)
                ports = [action.port for action in out.actions if action is not None and hasattr(action, "port")]
                self.frames += [(dpid, port, out.data) for port in ports]
            else:
                raise AssertionError(f"message type {kind} is not one the core sends")

    def send(self, sends: Iterable[Send]) -> list[tuple[int, int, bytes]]:
        """Apply the messages; the frames they sent out of ports."""
        before = len(self.frames)
        for send in sends:
            self.apply(send.dpid, send.messages)
        return self.frames[before:]

    def effects(self, effects: Effects) -> list[tuple[int, int, bytes]]:
        return self.send(effects.sends)

    def sync(self, core: ControllerCore) -> list[Push]:
        """One sync: every switch's push applied and confirmed, as its barrier reply would."""
        pushes = core.plan_sync()
        for push in pushes:
            self.apply(push.dpid, push.messages)
            core.reconciler.confirmed(push)
        return pushes

    def walk(self, fabric: Fabric, packet: Packet, host: str) -> Walk:
        """Send ``packet`` from ``host`` through the tables as they are now."""
        start = fabric.hosts[host]
        tables = {dpid: sorted(table.values(), key=entry_order) for dpid, table in self.tables.items()}
        for dpid in fabric.switches:
            tables.setdefault(dpid, [])
        groups = {dpid: list(groups.values()) for dpid, groups in self.groups.items()}
        return walk(fabric, tables, packet, start.dpid, start.port, groups=groups)


def connected(core: ControllerCore, switches: FakeSwitches, ports: dict[int, list[int]]) -> None:
    """Every switch in ``ports`` connects holding nothing; its LLDP goes out and is not kept."""
    for dpid, numbers in ports.items():
        switches.effects(core.switch_ready(dpid, numbers, {}, {}))
    switches.frames.clear()
