"""A switch on the wire, for tests of the controller's shell: it connects to the controller's OpenFlow server over
TCP and answers as a switch does (handshake, echo, role requests, barriers, flow-table read-back), keeping what
the flow-mods leave in ``FakeSwitches`` tables. Barriers can be held until the test releases them, and the first
``stale`` role requests refused as stale."""

from __future__ import annotations

import asyncio
import ssl
import struct
from collections.abc import Iterable

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.rules.entries import EntryKey, FlowEntry
from srfabric.rules.openflow.ofbind import wire_cookie
from srfabric.rules.openflow.wire import HEADER, pack_match
from srfabric.xdp.of_messages import (
    FLOW_STATS,
    MULTIPART,
    PORT,
    PortDesc,
    features_reply,
    header,
    packet_in,
    parse_flow_mod,
)
from tests.unit.controller.fake_switches import FakeSwitches

ROLE = struct.Struct("!I4xQ")


class WireSwitch:
    def __init__(self, dpid: int, ports: Iterable[int] = (), table: Iterable[FlowEntry] = (), stale: int = 0,
                 hold_barriers: bool = False, down: Iterable[int] = ()) -> None:
        self.dpid = dpid
        self.ports = [PortDesc(port, f"s{dpid}-eth{port}", dpid << 8 | port) for port in ports]
        self.down = set(down)  # ports whose carrier is down
        self.fake = FakeSwitches()
        self.cookies: dict[EntryKey, int] = {}  # the cookie each held entry was sent with
        for entry in table:
            self.fake.tables[dpid][entry.key] = entry
            self.cookies[entry.key] = wire_cookie(entry)
        self.stale = stale
        self.roles: list[tuple[int, int]] = []
        self.reads = 0  # flow-table read-backs
        self.changes = 0  # flow-mods, group-mods and packet-outs received
        self.events: list[str] = []
        self.release = asyncio.Event()
        if not hold_barriers:
            self.release.set()
        self._writer: asyncio.StreamWriter | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def table(self) -> dict[EntryKey, FlowEntry]:
        return self.fake.tables[self.dpid]

    async def connect(self, port: int, tls: ssl.SSLContext | None = None) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=tls)
        self._writer = writer
        writer.write(header(ofp.OFPT_HELLO, 0))
        self._spawn(self._serve(reader))

    def packet_in(self, port: int, frame: bytes) -> None:
        """A frame that missed the table on ``port``, sent to the controller."""
        self._write(packet_in(port, 0, 0, frame))

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[call-overload]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _write(self, data: bytes) -> None:
        assert self._writer is not None
        self._writer.write(data)

    async def _serve(self, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                head = await reader.readexactly(HEADER.size)
                _, kind, length, xid = HEADER.unpack(head)
                raw = head + await reader.readexactly(length - HEADER.size)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            self._handle(kind, xid, raw)

    def _handle(self, kind: int, xid: int, raw: bytes) -> None:
        if kind == ofp.OFPT_FEATURES_REQUEST:
            self._write(features_reply(xid, self.dpid, 8))
        elif kind == ofp.OFPT_ECHO_REQUEST:
            self._write(header(ofp.OFPT_ECHO_REPLY, xid, raw[HEADER.size:]))
        elif kind == ofp.OFPT_MULTIPART_REQUEST:
            self._multipart(xid, raw)
        elif kind == ofp.OFPT_ROLE_REQUEST:
            role, generation = ROLE.unpack_from(raw, HEADER.size)
            self.roles.append((role, generation))
            if self.stale:
                self.stale -= 1
                self._write(header(ofp.OFPT_ERROR, xid, struct.pack("!HH", ofp.OFPET_ROLE_REQUEST_FAILED,
                                                                    ofp.OFPRRFC_STALE) + raw[:64]))
            else:
                self._write(header(ofp.OFPT_ROLE_REPLY, xid, ROLE.pack(role, generation)))
        elif kind == ofp.OFPT_SET_ASYNC:
            self.events.append("async set")
        elif kind == ofp.OFPT_BARRIER_REQUEST:
            self.events.append(f"barrier after {self.changes} messages")
            self._spawn(self._barrier_reply(xid))
        elif kind in (ofp.OFPT_FLOW_MOD, ofp.OFPT_GROUP_MOD, ofp.OFPT_PACKET_OUT):
            self.changes += 1
            if kind == ofp.OFPT_FLOW_MOD:
                self._cookie(raw)
            self.fake.apply(self.dpid, [Raw(raw)])

    def _cookie(self, raw: bytes) -> None:
        mod = parse_flow_mod(raw)
        if mod.command == ofp.OFPFC_ADD:
            self.cookies[mod.entry.key] = int.from_bytes(raw[8:16], "big")
        else:
            self.cookies.pop(mod.entry.key, None)

    async def _barrier_reply(self, xid: int) -> None:
        await self.release.wait()
        self.events.append("barrier answered")
        self._write(header(ofp.OFPT_BARRIER_REPLY, xid))

    def _multipart(self, xid: int, raw: bytes) -> None:
        (kind,) = struct.unpack_from("!H", raw, HEADER.size)
        if kind == ofp.OFPMP_PORT_DESC:
            body = b"".join(PORT.pack(p.number, p.mac.to_bytes(6, "big"), p.name.encode(), 0,
                                      ofp.OFPPS_LINK_DOWN if p.number in self.down else ofp.OFPPS_LIVE, 0, 0, 0, 0,
                                      10_000_000, 10_000_000) for p in self.ports)
            self._write(header(ofp.OFPT_MULTIPART_REPLY, xid, MULTIPART.pack(ofp.OFPMP_PORT_DESC, 0) + body))
        elif kind == ofp.OFPMP_FLOW:
            self.reads += 1
            body = b""
            for key, entry in self.table.items():
                packed = pack_match(entry.match)
                assert packed is not None, entry
                body += FLOW_STATS.pack(FLOW_STATS.size + len(packed), entry.table, 0, 0, entry.priority, 0, 0, 0,
                                        self.cookies[key], 0, 0) + packed
            self._write(header(ofp.OFPT_MULTIPART_REPLY, xid, MULTIPART.pack(ofp.OFPMP_FLOW, 0) + body))
        else:  # no group read-back, as the XDP agent: the controller takes it as holding no groups
            self._write(header(ofp.OFPT_ERROR, xid, struct.pack("!HH", ofp.OFPET_BAD_REQUEST,
                                                                ofp.OFPBRC_BAD_MULTIPART) + raw[:64]))


class Raw:
    """Bytes read off the wire, applied as the message they are."""

    def __init__(self, raw: bytes) -> None:
        self.buf = raw

    def set_xid(self, xid: int) -> None:
        """Already numbered."""

    def serialize(self) -> None:
        """Already packed."""
