"""An OpenFlow 1.3 agent that makes a set of interfaces one XDP switch, for the same controller as OVS.

``python -m srfabric.xdp.agent --dpid 0x101 --controller 127.0.0.1:6653 --codec mac-nibble
--port 1=s1-eth1 --port 2=s1-eth2 ...`` loads the codec's XDP object, attaches
``sr_host`` to every port, connects to the controller and then keeps the
switch equal to the flow table the controller writes:

- flow-mods update a table of ``FlowEntry`` objects (read back from the wire);
  an entry with no XDP form is refused with an OFPT_ERROR, as OVS refuses what
  it cannot do;
- at each barrier the table is translated (``xdp_tables``) into map contents
  and written, and trusted ports (fabric, service functions) get ``sr_fabric``;
- frames the programs pass to the kernel (ARP, LLDP) are read with AF_PACKET
  and sent up as packet-ins; packet-outs leave through the named port;
- flow statistics report the entries, with the XDP program's forged-header drop
  count on the security entries.

SIGTERM or SIGINT detaches the programs and removes the pins.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import ssl
import struct
import subprocess
from dataclasses import replace
from pathlib import Path

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.errors import SrfabricError
from srfabric.rules.entries import EntryKey, FlowEntry, Group, GroupEntry, Kind, Output, ToController, cookie
from srfabric.rules.openflow.wire import HEADER
from srfabric.rules.pipeline import HOST_IN, PORT_IN
from srfabric.security.switch_identity import client_context
from srfabric.xdp import layout
from srfabric.xdp.arp_answer import answered, arp_entry
from srfabric.xdp.carrier import link_events, link_socket
from srfabric.xdp.loader import LoadedObject, load
from srfabric.xdp.of_messages import (
    FlowMod,
    PortDesc,
    UnsupportedInstruction,
    error,
    features_reply,
    flow_stats_reply,
    header,
    packet_in,
    parse_flow_mod,
    parse_group_mod,
    parse_packet_out,
    port_desc_reply,
    port_status,
)
from srfabric.xdp.ports import attach_command, carrier_of, mac_of, parse_port
from srfabric.xdp.probe import verdict_counts
from srfabric.xdp.replication import Replicator, replica_key, replicas_value, set_recovery
from srfabric.xdp.session import keep_serving
from srfabric.xdp.tables import BUILT_IN, XdpTableError, XdpTables, check_group, xdp_tables
from srfabric.xdp.walk import fill

log = logging.getLogger("srfabric.xdp.agent")
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
TABLES = 5


class XdpAgent:
    def __init__(self, dpid: int, ports: dict[int, str], codec: str, name: str,
                 recovery: tuple[int, int] = (32, 2000)) -> None:
        self.dpid, self.ports, self.codec, self.name = dpid, ports, codec, name
        self.recovery = recovery  # the egress edge's 802.1CB history length and reset time (ms)
        self.replicator: Replicator | None = None  # mac-nibble only: the codec that carries an R-TAG
        self.table: dict[EntryKey, FlowEntry] = {}
        self.groups: dict[int, GroupEntry] = {}
        self.applied: XdpTables | None = None
        self.changed = False  # the table differs from what the maps hold
        self.roles: dict[int, str] = {}
        self.obj: LoadedObject | None = None
        self.sockets: dict[int, socket.socket] = {}
        self.writer: asyncio.StreamWriter | None = None
        self.outage = False  # the controller went away and is not back yet
        self.indexes: dict[int, int] = {}  # interface index -> port number
        self.carrier: dict[int, bool] = {}  # port -> carrier up, as last reported
        self.links: socket.socket | None = None

    # -- the data plane ------------------------------------------------------------------
    def start_dataplane(self) -> None:
        self.obj = load(self.codec, self.name)
        for port, ifname in self.ports.items():
            ifindex = socket.if_nametoindex(ifname)
            self.indexes[ifindex] = port
            self.carrier[port] = carrier_of(ifname)
            self.obj.add_port(port, ifindex)
            self.obj.map("sr_ifports").update(layout.u32(ifindex), layout.u32(port))
            self._attach(port, "sr_host")
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            sock.bind((ifname, 0))
            sock.setblocking(False)
            self.sockets[port] = sock
        self.links = link_socket()
        if self.codec == "mac-nibble":
            set_recovery(self.obj, *self.recovery)
            self.replicator = Replicator(f"{self.name}-replicate")
            for ifname in self.ports.values():
                self.replicator.attach(ifname)

    def _attach(self, port: int, program: str) -> None:
        assert self.obj is not None
        if self.roles.get(port) == program:
            return
        done = subprocess.run(attach_command(self.ports[port], self.obj.program(program)), capture_output=True,
                              text=True)
        if done.returncode != 0:
            raise SrfabricError("xdp", f"attaching {program} to {self.ports[port]}: {done.stderr.strip()}")
        self.roles[port] = program

    def stop_dataplane(self) -> None:
        for sock in [*self.sockets.values(), *([self.links] if self.links else [])]:
            sock.close()
        for ifname in self.ports.values():
            subprocess.run(attach_command(ifname, None), capture_output=True)
        if self.replicator is not None:
            self.replicator.close()
        if self.obj is not None:
            self.obj.unload()

    def apply(self) -> None:
        """Write the table into the maps: new contents first, then stale keys out, then port programs."""
        assert self.obj is not None
        tables = xdp_tables(self.table.values(), self.groups.values())
        fill(self.obj, tables)
        old = self.applied
        if old is not None:
            for map_name, before, now in (("sr_routes", old.routes, tables.routes),
                                          ("sr_restore", old.restore, tables.restore),
                                          ("sr_deliver", old.deliver, tables.deliver)):
                for key in set(before) - set(now):
                    with contextlib.suppress(SrfabricError):
                        self.obj.map(map_name).delete(key)
        if self.replicator is not None:
            ifindex = {port: index for index, port in self.indexes.items()}
            self.replicator.write({replica_key(ifindex[port], mac): replicas_value(
                [(ifindex[out], header) for out, header in copies]) for (port, mac), copies in tables.replicas.items()
                if port in ifindex and all(out in ifindex for out, _ in copies)})
        self.applied = tables
        for port in self.ports:
            self._attach(port, "sr_fabric" if port in tables.trusted_ports else "sr_host")

    # -- OpenFlow --------------------------------------------------------------------------
    def send(self, raw: bytes) -> None:
        if self.writer is not None:
            self.writer.write(raw)

    def on_flow_mod(self, raw: bytes, xid: int) -> None:
        try:
            mod = parse_flow_mod(raw)
        except UnsupportedInstruction as refused:
            log.warning("%s", refused)
            self.send(error(xid, ofp.OFPET_BAD_INSTRUCTION, ofp.OFPBIC_UNSUP_INST, raw))
            return
        except SrfabricError:
            self.send(error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN, raw))
            return
        if mod.command == ofp.OFPFC_ADD:
            self._add(mod, raw, xid)
        elif mod.command == ofp.OFPFC_DELETE_STRICT:
            self.changed |= self.table.pop(mod.entry.key, None) is not None
        elif mod.command == ofp.OFPFC_DELETE:
            wanted = set(mod.entry.match)
            for key in [k for k in self.table if mod.table in (ofp.OFPTT_ALL, k[0]) and wanted <= set(k[2])]:
                del self.table[key]
                self.changed = True
        else:
            self.send(error(xid, ofp.OFPET_FLOW_MOD_FAILED, ofp.OFPFMFC_BAD_COMMAND, raw))

    def _add(self, mod: FlowMod, raw: bytes, xid: int) -> None:
        entry = mod.entry
        try:
            if not mod.complete and entry.kind not in BUILT_IN:
                raise XdpTableError("actions", "an action has no XDP form")
            xdp_tables([entry], self.groups.values())  # refuse now what could never be applied
        except XdpTableError as refused:
            log.warning("refused %s: %s", entry, refused)
            self.send(error(xid, ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_TYPE, raw))  # "not supported"
            return
        self.changed |= self.table.get(entry.key) != entry
        self.table[entry.key] = entry

    def on_group_mod(self, raw: bytes, xid: int) -> None:
        """Indirect groups (default routes' shared headers); what the XDP switch could not apply is refused with
        an OpenFlow error and changes nothing, as OVS refuses what it does not support."""
        try:
            mod = parse_group_mod(raw)
        except SrfabricError:
            self.send(error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN, raw))
            return
        group = mod.group
        if mod.command == ofp.OFPGC_DELETE:
            gone = {g for g in self.groups if group.group_id in (ofp.OFPG_ALL, g)}
            for gid in gone:
                del self.groups[gid]
            # As OpenFlow says: deleting a group removes the entries that send frames to it.
            for key in [k for k, e in self.table.items() if any(isinstance(a, Group) and a.group_id in gone
                                                                  for a in e.actions)]:
                del self.table[key]
            self.changed |= bool(gone)
            return
        if mod.command == ofp.OFPGC_MODIFY and group.group_id not in self.groups:
            self.send(error(xid, ofp.OFPET_GROUP_MOD_FAILED, ofp.OFPGMFC_UNKNOWN_GROUP, raw))
            return
        if mod.command not in (ofp.OFPGC_ADD, ofp.OFPGC_MODIFY):
            self.send(error(xid, ofp.OFPET_GROUP_MOD_FAILED, ofp.OFPGMFC_BAD_COMMAND, raw))
            return
        try:
            if not mod.complete:
                raise XdpTableError("group", f"group {group.group_id} has a type or an action with no XDP form")
            check_group(group)
            # With the entries that use it, the group must still translate: a barrier would fail otherwise.
            xdp_tables(self.table.values(), {**self.groups, group.group_id: group}.values())
        except XdpTableError as refused:
            log.warning("refused %s: %s", group, refused)
            self.send(error(xid, ofp.OFPET_GROUP_MOD_FAILED, ofp.OFPGMFC_BAD_TYPE, raw))
            return
        # An add of a group held already replaces it: after a controller restart the switch's groups are not
        # read back (no group description here), so the controller adds them again.
        self.changed |= self.groups.get(group.group_id) != group
        self.groups[group.group_id] = group

    def on_packet_out(self, raw: bytes, xid: int) -> None:
        try:
            out = parse_packet_out(raw)
        except SrfabricError:
            self.send(error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN, raw))
            return
        if len(out.actions) != 1 or not isinstance(out.actions[0], Output) or out.actions[0].port not in self.sockets:
            self.send(error(xid, ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_PORT, raw))
            return
        with contextlib.suppress(OSError):
            self.sockets[out.actions[0].port].send(out.data)

    def on_barrier(self, raw: bytes, xid: int) -> None:
        """Bring the maps up to the table (only if it changed since), then confirm."""
        try:
            if self.changed:
                self.apply()
                self.changed = False
        except SrfabricError as failed:
            log.warning("barrier: %s", failed)
            self.send(error(xid, ofp.OFPET_FLOW_MOD_FAILED, ofp.OFPFMFC_TABLE_FULL, raw))
        self.send(header(ofp.OFPT_BARRIER_REPLY, xid))

    def on_multipart(self, raw: bytes, xid: int) -> None:
        (kind,) = struct.unpack_from("!H", raw, HEADER.size)
        if kind == ofp.OFPMP_PORT_DESC:
            descs = [PortDesc(port, name, mac_of(name)) for port, name in sorted(self.ports.items())]
            self.send(port_desc_reply(xid, descs))
        elif kind == ofp.OFPMP_FLOW:
            forged = verdict_counts(self.obj)[layout.REASONS.index("drop_forged")] if self.obj else 0
            rows = []
            for entry in sorted(self.table.values(), key=lambda e: (e.table, -e.priority, e.match)):
                counted = forged if entry.kind == Kind.SECURITY else 0
                forged -= counted
                rows.append((entry, counted, 0))
            self.send(flow_stats_reply(xid, rows))
        else:
            self.send(error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_MULTIPART, raw))

    def on_frame(self, port: int) -> None:
        """A frame an XDP program passed up (ARP, LLDP): to the controller, as the flow table says."""
        sock = self.sockets[port]
        while True:
            try:
                data, address = sock.recvfrom(65535)
            except (BlockingIOError, InterruptedError):
                return
            if address[2] == PACKET_OUTGOING or data[12:14] == b"\xf1\xc1":  # R-TAG: the tc replicator's
                continue
            table = HOST_IN if data[12:14] == b"\x08\x06" else PORT_IN
            punt = arp_entry(self.table.values(), port, data) if table == HOST_IN else None
            if punt is None:
                punt = next((e for e in self.table.values() if e.table == table and ToController() in e.actions),
                            None)
            elif (reply := answered(punt, data)) is not None:  # a known host's address: answered here
                try:
                    sock.send(reply)
                except OSError:  # not answered after all: the controller's copy must say so, and it answers
                    punt = replace(punt, cookie=cookie(Kind.CONTROL))
            if punt is not None and ToController() in punt.actions:
                self.send(packet_in(port, table, punt.cookie, data))

    def on_link(self) -> None:
        """Carrier changes of our interfaces: each a port status to the controller (Open vSwitch sends one too)."""
        assert self.links is not None
        while True:
            try:
                data = self.links.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # ENOBUFS: messages were lost; read every port's carrier instead
                events = [(index, carrier_of(self.ports[port])) for index, port in self.indexes.items()]
            else:
                events = link_events(data)
            for index, up in events:
                port = self.indexes.get(index)
                if port is not None and self.carrier.get(port) != up:
                    self.carrier[port] = up
                    name = self.ports[port]
                    with contextlib.suppress(OSError):
                        self.send(port_status(PortDesc(port, name, mac_of(name)), down=not up))

    async def serve(self, host: str, port: int, tls: ssl.SSLContext | None = None) -> None:
        reader, self.writer = await asyncio.open_connection(host, port, ssl=tls)
        if self.outage:
            log.warning("switch %#x: controller %s:%d back", self.dpid, host, port)
            self.outage = False
        self.send(header(ofp.OFPT_HELLO, 0))
        loop = asyncio.get_running_loop()
        for number, sock in self.sockets.items():
            loop.add_reader(sock.fileno(), self.on_frame, number)
        if self.links is not None:
            loop.add_reader(self.links.fileno(), self.on_link)
        handlers = {ofp.OFPT_FLOW_MOD: self.on_flow_mod, ofp.OFPT_GROUP_MOD: self.on_group_mod,
                    ofp.OFPT_PACKET_OUT: self.on_packet_out,
                    ofp.OFPT_BARRIER_REQUEST: self.on_barrier, ofp.OFPT_MULTIPART_REQUEST: self.on_multipart}
        while True:
            head = await reader.readexactly(HEADER.size)
            _, msg_type, length, xid = HEADER.unpack(head)
            raw = head + await reader.readexactly(length - HEADER.size)
            if msg_type == ofp.OFPT_ECHO_REQUEST:
                self.send(header(ofp.OFPT_ECHO_REPLY, xid, raw[HEADER.size:]))
            elif msg_type == ofp.OFPT_FEATURES_REQUEST:
                self.send(features_reply(xid, self.dpid, TABLES))
            elif msg_type in handlers:
                handlers[msg_type](raw, xid)
            await self.writer.drain()


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(prog="srfabric.xdp.agent")
    args.add_argument("--dpid", required=True, type=lambda text: int(text, 0))
    args.add_argument("--controller", default="127.0.0.1:6653")
    args.add_argument("--codec", default="mac-nibble", choices=["mac-nibble", "mac-vlan-mpls"])
    args.add_argument("--port", action="append", default=[], type=parse_port)
    args.add_argument("--name", help="pin name under /sys/fs/bpf/srfabric (default agent-<dpid>)")
    args.add_argument("--tls", metavar="DIR", type=Path,
                      help="connect over TLS with DIR's CA and the certificate --cert (``srfabric pki switch``)")
    args.add_argument("--cert", metavar="NAME", help="the certificate's name in --tls's folder (NAME-cert.pem)")
    args.add_argument("--frer-history-length", type=int, default=32, help="802.1CB elimination at the egress edge")
    args.add_argument("--frer-reset-ms", type=int, default=2000)
    options = args.parse_args(argv)
    if (options.tls is None) != (options.cert is None):
        args.error("--tls and --cert go together")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    host, _, port = options.controller.rpartition(":")
    agent = XdpAgent(options.dpid, dict(options.port), options.codec, options.name or f"agent-{options.dpid:x}",
                     (options.frer_history_length, options.frer_reset_ms))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            try:
                tls = client_context(options.tls, options.cert) if options.tls else None
                await keep_serving(agent, host, int(port), tls)
            except (ssl.SSLError, FileNotFoundError) as error:  # a refused handshake, a certificate missing
                raise SrfabricError("--tls", f"connecting to {options.controller} over TLS: {error}") from None

    try:
        agent.start_dataplane()
        asyncio.run(run())
    except SrfabricError as failed:
        print(f"srfabric.xdp.agent: {failed}")
        return 1
    finally:
        agent.stop_dataplane()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
