"""An OpenFlow 1.3 channel on asyncio; os-ken only builds and parses the messages.

Each switch connection runs the handshake (HELLO, FEATURES, PORT_DESC), answers
echo requests, matches barrier and multipart replies to their requests by xid,
and hands everything else (PACKET_IN, PORT_STATUS) to the controller.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from os_ken.ofproto import ofproto_parser
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.errors import SrfabricError
from srfabric.rules.openflow.ofbind import PROTOCOL
from srfabric.rules.openflow.wire import HEADER, PackedMessage, PacketIn, parse_packet_in

log = logging.getLogger(__name__)
READ_SIZE = 1 << 16
RECENT = 4096  # sent messages kept to name in an error report


class SwitchError(SrfabricError):
    """A switch refused a message (OFPT_ERROR: ``refused`` is its (type, code)) or stopped answering."""

    refused: tuple[int, int] | None = None


@dataclass
class PortInfo:
    number: int
    name: str
    mac: str
    down: bool = False  # its carrier is down or it is set down (as the switch last said)


@dataclass
class Counters:
    """Control-channel traffic, for overhead measurements."""

    bytes_sent: int = 0
    bytes_received: int = 0
    messages_sent: int = 0
    messages_received: int = 0


def port_down(desc: Any) -> bool:
    """Whether an OpenFlow port description says the port cannot carry frames: no carrier, or set down."""
    return bool(desc.state & ofp.OFPPS_LINK_DOWN or desc.config & ofp.OFPPC_PORT_DOWN)


def describe(msg: Any) -> str:
    """A sent message as an error report names it."""
    if msg is None:
        return "an unknown message"
    if isinstance(msg, PackedMessage):
        return f"{msg.name} {bytes(msg.buf).hex()}"
    detail = f" {msg.match} {msg.instructions}" if hasattr(msg, "instructions") else ""
    return type(msg).__name__ + detail


# The message types a switch sends a controller (OpenFlow 1.3, 7.1.1): only these reach os-ken's parser, whose
# parsers of the controller's own messages (flow-mods, group-mods) can loop on mutated input.
FROM_SWITCHES = frozenset({
    ofp.OFPT_HELLO, ofp.OFPT_ERROR, ofp.OFPT_ECHO_REQUEST, ofp.OFPT_ECHO_REPLY, ofp.OFPT_EXPERIMENTER,
    ofp.OFPT_FEATURES_REPLY, ofp.OFPT_GET_CONFIG_REPLY, ofp.OFPT_PACKET_IN, ofp.OFPT_FLOW_REMOVED,
    ofp.OFPT_PORT_STATUS, ofp.OFPT_MULTIPART_REPLY, ofp.OFPT_BARRIER_REPLY, ofp.OFPT_QUEUE_GET_CONFIG_REPLY,
    ofp.OFPT_ROLE_REPLY, ofp.OFPT_GET_ASYNC_REPLY})
MAX_UNSENT_BYTES = 64 * 2**20  # what a connection may hold for a switch that does not read (then it is closed)


class SwitchConnection:
    """One switch's control connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.reader = reader
        self.clock = clock
        self.writer = writer
        self.dpid: int = 0
        self.ports: dict[int, PortInfo] = {}
        self.bridge_name: str | None = None  # the LOCAL port's name: Open vSwitch names it after the bridge
        self.counters = Counters()
        self._xid = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._multipart: dict[int, list[Any]] = {}
        self._errors: list[tuple[int, str]] = []
        # What was sent lately, to explain errors: slot ``xid % RECENT`` holds (xid, name, bytes) of a packed
        # message or (xid, message, None) of os-ken's, so that keeping one costs no more than a list store
        # (dropping a dict's oldest key one at a time grows costly), and a reactive flow's messages are not
        # kept as objects the garbage collector walks.
        self._recent: list[tuple[int, Any, bytearray | None]] = [(0, None, None)] * RECENT
        self._out = bytearray()  # written once per turn of the event loop (``send_all``)
        # Packet-ins go here, called as they are read, when set; else to the read loop's ``deliver``.
        self.on_packet_in: Callable[[SwitchConnection, PacketIn], None] | None = None
        self.closed = asyncio.Event()
        self.taken_at = 0.0  # when the controller took it (``time.time()``): the fabric view's connected_since

    @property
    def peer(self) -> str:
        """The switch's address and port, as the connection came from."""
        name = self.writer.get_extra_info("peername")
        return f"{name[0]}:{name[1]}" if isinstance(name, tuple) and len(name) >= 2 else str(name)

    def _next_xid(self) -> int:
        self._xid = (self._xid + 1) & 0xFFFFFFFF or 1
        return self._xid

    def send(self, msg: Any) -> int:
        """Serialize ``msg`` with the next xid and write it; returns the xid."""
        return self.send_all((msg,))[0]

    def send_all(self, msgs: Sequence[Any]) -> list[int]:
        """Send messages; their xids.

        What is sent during one turn of the event loop leaves in one write when the turn ends: one system
        call for a flow-mod and its packet-out, and one for all the answers to a batch of packet-ins read
        together, which under load is what keeps the controller ahead.
        """
        xids = []
        out = self._out
        if not out:
            asyncio.get_running_loop().call_soon(self._flush)
        before = len(out)
        for msg in msgs:
            xid = self._next_xid()
            msg.set_xid(xid)
            msg.serialize()
            out += msg.buf
            # Described only if the switch reports an error for it.
            self._recent[xid % RECENT] = (xid, msg.name, msg.buf) if type(msg) is PackedMessage else (xid, msg, None)
            xids.append(xid)
        self.counters.bytes_sent += len(out) - before
        self.counters.messages_sent += len(msgs)
        return xids

    def _flush(self) -> None:
        if self._out and self.writer.is_closing():  # the switch went: its requests fail (``_ask``)
            self._out.clear()
        if self._out:
            self.writer.write(bytes(self._out))
            self._out.clear()
            if self.writer.transport.get_write_buffer_size() > MAX_UNSENT_BYTES:  # a switch that stopped reading
                log.warning("switch %#x: %d bytes unread by the switch, over %d: closing its connection", self.dpid,
                            self.writer.transport.get_write_buffer_size(), MAX_UNSENT_BYTES)
                self.writer.transport.abort()  # at once: a graceful close would wait for the switch to read

    def _ask(self, msg: Any, before: Sequence[Any] = ()) -> tuple[int, asyncio.Future[Any]]:
        """Send a request now, after ``before`` in the same write; its reply completes the returned future
        (see ``_answer``)."""
        xid = self.send_all((*before, msg))[-1]
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self.writer.is_closing():  # nothing can reach the switch, nor its answer come back
            future.set_exception(SwitchError("switch", f"{self.dpid:#x} disconnected"))
        self._waiting[xid] = future
        return xid, future

    async def _answer(self, xid: int, future: asyncio.Future[Any], timeout: float) -> Any:
        try:
            self._flush()
            await self.writer.drain()
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise SwitchError("switch", f"{self.dpid:#x} did not answer within {timeout} s") from None
        except ConnectionError:  # it went while this waited to write
            raise SwitchError("switch", f"{self.dpid:#x} disconnected") from None
        finally:
            self._waiting.pop(xid, None)

    async def _request(self, msg: Any, timeout: float) -> Any:
        return await self._answer(*self._ask(msg), timeout)

    def start_barrier(self, timeout: float = 10.0, before: Sequence[Any] = ()) -> Awaitable[None]:
        """Send ``before`` and a barrier request now, in one write; awaiting the result waits for the
        barrier's reply (see ``barrier``).

        Lets a caller do other work while the switch works through what was sent before. One write
        wakes the switch once for a change and its barrier, and it leaves at once, not when the loop turns: a sync
        plans the next switch's push while this switch applies its own.
        """
        asked = self._ask(parser.OFPBarrierRequest(PROTOCOL), before)
        self._flush()
        return self._barrier_reply(*asked, timeout)

    async def _barrier_reply(self, xid: int, future: asyncio.Future[Any], timeout: float) -> None:
        await self._answer(xid, future, timeout)
        if self._errors:
            errors, self._errors = self._errors, []
            raise SwitchError("switch", f"{self.dpid:#x} rejected {len(errors)} message(s): {errors[0][1]}")

    async def barrier(self, timeout: float = 10.0) -> None:
        """Wait until the switch has processed everything sent before; raise on any error it reported."""
        await self.start_barrier(timeout)

    async def multipart(self, msg: Any, timeout: float = 10.0) -> list[Any]:
        """Send a multipart request and return the bodies of all reply parts."""
        parts: list[Any] = await self._request(msg, timeout)
        return parts

    async def echo_rtt_ns(self, timeout: float = 10.0) -> int:
        """One echo request's round trip through the channel and the switch's agent."""
        begin = self.clock()
        await self._request(parser.OFPEchoRequest(PROTOCOL, data=b""), timeout)
        return self.clock() - begin

    async def request_role(self, role: int, generation: int, timeout: float = 10.0) -> Any:
        """OpenFlow's controller role (``OFPCR_ROLE_MASTER`` or ``_SLAVE``) with its generation id; the reply.
        A MASTER request makes every other controller of the switch its SLAVE."""
        return await self._request(parser.OFPRoleRequest(PROTOCOL, role, generation), timeout)

    def hear_as_slave(self) -> None:
        """While this connection is SLAVE, have the switch send it what an entry sends to the controller (LLDP,
        ARP, Neighbour Discovery: the frames that tell the topology) and every port change (``OFPT_SET_ASYNC``;
        a SLAVE hears port changes only, by default). As MASTER it hears what OpenFlow 1.3 sends a MASTER."""
        master_in = 1 << ofp.OFPR_NO_MATCH | 1 << ofp.OFPR_ACTION
        every_port_change = 1 << ofp.OFPPR_ADD | 1 << ofp.OFPPR_DELETE | 1 << ofp.OFPPR_MODIFY
        every_removal = (1 << ofp.OFPRR_IDLE_TIMEOUT | 1 << ofp.OFPRR_HARD_TIMEOUT | 1 << ofp.OFPRR_DELETE
                         | 1 << ofp.OFPRR_GROUP_DELETE)
        self.send(parser.OFPSetAsync(PROTOCOL, [master_in, 1 << ofp.OFPR_ACTION],
                                     [every_port_change, every_port_change], [every_removal, 0]))

    async def flow_stats(self) -> list[Any]:
        return await self.multipart(parser.OFPFlowStatsRequest(PROTOCOL))

    async def group_desc(self) -> list[Any]:
        return await self.multipart(parser.OFPGroupDescStatsRequest(PROTOCOL))

    async def meter_config(self) -> list[Any]:
        return await self.multipart(parser.OFPMeterConfigStatsRequest(PROTOCOL, 0, ofp.OFPM_ALL))

    async def meter_stats(self) -> list[Any]:
        return await self.multipart(parser.OFPMeterStatsRequest(PROTOCOL, 0, ofp.OFPM_ALL))

    async def handshake(self, timeout: float = 10.0) -> None:
        self.send(parser.OFPHello(PROTOCOL))
        features = await self._request(parser.OFPFeaturesRequest(PROTOCOL), timeout)
        self.dpid = features.datapath_id
        self.send(parser.OFPSetConfig(PROTOCOL, ofp.OFPC_FRAG_NORMAL, 0xFFFF))
        for port in await self.multipart(parser.OFPPortDescStatsRequest(PROTOCOL, 0), timeout):
            self._note_port(port)

    def _note_port(self, port: Any) -> None:
        name = port.name.decode() if isinstance(port.name, bytes) else str(port.name)
        if port.port_no <= ofp.OFPP_MAX:
            self.ports[port.port_no] = PortInfo(port.port_no, name, port.hw_addr, port_down(port))
        elif port.port_no == ofp.OFPP_LOCAL and name:
            self.bridge_name = name

    async def read_loop(self, deliver: Callable[[SwitchConnection, Any], Awaitable[None]]) -> None:
        pending = b""
        try:
            while True:
                chunk = await self.reader.read(READ_SIZE)
                if not chunk:
                    break
                received_ns = self.clock()
                data = pending + chunk if pending else chunk
                offset, end = 0, len(data)
                # Every whole message of what has arrived, before the next read: a batch of packet-ins is
                # handled in one turn of the event loop, and its answers leave in one write.
                while end - offset >= HEADER.size:
                    version, msg_type, length, xid = HEADER.unpack_from(data, offset)
                    if length < HEADER.size:
                        raise SwitchError("length", f"switch sent a message of length {length}")
                    if end - offset < length:
                        break
                    raw = data[offset:offset + length]
                    offset += length
                    if msg_type == ofp.OFPT_PACKET_IN and version == ofp.OFP_VERSION and self.on_packet_in:
                        self._packet_in(raw, length, received_ns)  # the hot path of reactive setup: no await
                    else:
                        await self._receive(raw, version, msg_type, length, xid, received_ns, deliver)
                pending = data[offset:]
        except (ConnectionError, SwitchError) as error:
            log.info("switch %#x: connection ended: %s", self.dpid, error)
        finally:
            self.closed.set()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(SwitchError("switch", f"{self.dpid:#x} disconnected"))

    def _packet_in(self, raw: bytes, length: int, received_ns: int) -> None:
        """A packet-in to ``on_packet_in``, parsed without os-ken objects."""
        self.counters.bytes_received += length
        self.counters.messages_received += 1
        try:
            self.on_packet_in(self, parse_packet_in(raw, received_ns))  # type: ignore[misc]
        except (SrfabricError, ValueError, KeyError, AttributeError, struct.error) as error:
            log.info("switch %#x: ignored a packet-in: %s", self.dpid, error)

    async def _receive(self, raw: bytes, version: int, msg_type: int, length: int, xid: int, received_ns: int,
                       deliver: Callable[[SwitchConnection, Any], Awaitable[None]]) -> None:
        self.counters.bytes_received += length
        self.counters.messages_received += 1
        if version != ofp.OFP_VERSION:
            if msg_type == ofp.OFPT_HELLO:
                return  # version negotiation: the switch offers a bitmap; we speak 1.3
            raise SwitchError("version", f"switch speaks OpenFlow wire version {version}, not 1.3")
        try:
            if msg_type == ofp.OFPT_PACKET_IN:  # the hot path of reactive setup: no os-ken objects
                await deliver(self, parse_packet_in(raw, received_ns))
                return
            if msg_type not in FROM_SWITCHES:  # a controller's message (a forged flow-mod): never parsed
                log.info("switch %#x: ignored message type %d, which no switch sends", self.dpid, msg_type)
                return
            msg = ofproto_parser.msg(PROTOCOL, version, msg_type, length, xid, raw)
            if msg is not None:
                msg.received_ns = received_ns  # when the read that completed it returned, for setup breakdowns
                await self._dispatch(msg, deliver)
        except (SrfabricError, ValueError, KeyError, AttributeError, IndexError, TypeError, AssertionError,
                struct.error) as error:
            # One odd message must not end the switch's connection (os-ken asserts on some malformed bodies).
            log.info("switch %#x: ignored message type %d: %s", self.dpid, msg_type, error)

    async def _dispatch(self, msg: Any, deliver: Callable[[SwitchConnection, Any], Awaitable[None]]) -> None:
        xid = msg.xid
        if isinstance(msg, parser.OFPHello):
            return  # its xid is the switch's own and must not answer one of our requests
        if isinstance(msg, parser.OFPEchoRequest):
            reply = parser.OFPEchoReply(PROTOCOL, data=msg.data)
            reply.set_xid(xid)
            reply.serialize()
            if not self.writer.is_closing():
                self.writer.write(reply.buf)
        elif isinstance(msg, parser.OFPErrorMsg):
            sent = describe(self._sent(xid))
            if sent.startswith(("OFPFlowMod", "OFPGroupMod", "OFPMeterMod")):  # packet-outs' say nothing of tables
                self._errors.append((xid, f"OFPT_ERROR type={msg.type} code={msg.code} for {sent}"))
            future = self._waiting.get(xid)
            if future is not None and not future.done():  # a request the switch refused
                refused = SwitchError("switch", f"{self.dpid:#x} refused {sent}: type={msg.type} code={msg.code}")
                refused.refused = (msg.type, msg.code)
                future.set_exception(refused)
            log.warning("switch %#x: error type=%s code=%s xid=%s", self.dpid, msg.type, msg.code, xid)
        elif isinstance(msg, parser.OFPPortStatus):
            if msg.reason == ofp.OFPPR_DELETE:
                self.ports.pop(msg.desc.port_no, None)
            else:
                self._note_port(msg.desc)
            await deliver(self, msg)
        elif isinstance(msg, parser.OFPMultipartReply) or hasattr(msg, "body") and xid in self._waiting:
            parts = self._multipart.setdefault(xid, [])
            body = msg.body if isinstance(msg.body, list) else [msg.body]
            parts.extend(body)
            if not msg.flags & ofp.OFPMPF_REPLY_MORE:
                self._resolve(xid, self._multipart.pop(xid))
        elif xid in self._waiting:
            self._resolve(xid, msg)
        else:
            await deliver(self, msg)

    def _sent(self, xid: int) -> Any:
        """The message sent with ``xid``, if it is among the last ``RECENT``; else None."""
        kept, msg, buf = self._recent[xid % RECENT]
        if kept != xid:
            return None
        return msg if buf is None else PackedMessage(buf, msg)

    def _resolve(self, xid: int, value: Any) -> None:
        future = self._waiting.get(xid)
        if future is not None and not future.done():
            future.set_result(value)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
