"""The attacker's end of an OpenFlow connection, for ``srfabric bench hostile``: a peer that connects (over TLS
with a certificate of its choice, or plain TCP), can answer the controller as a switch does until it is taken,
and then sends what it likes. It records what it got: the messages the controller sent and whether, and when,
the controller closed the connection."""

from __future__ import annotations

import asyncio
import ssl
import struct
import time
from collections import Counter
from pathlib import Path

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.rules.openflow.wire import HEADER
from srfabric.xdp.of_messages import MULTIPART, error, features_reply, header, port_desc_reply

ROLE = struct.Struct("!I4xQ")


def tls_context(folder: Path | None, name: str | None) -> ssl.SSLContext:
    """A client context showing ``name``'s certificate of ``folder`` (none when ``name`` is None); the
    controller's certificate is not checked: an attacker does not care who answers."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if folder is not None and name is not None:
        context.load_cert_chain(folder / f"{name}-cert.pem", folder / f"{name}-privkey.pem")
    return context


class HostilePeer:
    """Connect with ``open()``; ``play_switch(dpid)`` answers the handshake as switch ``dpid`` would."""

    def __init__(self, port: int, tls: ssl.SSLContext | None) -> None:
        self.port, self.tls = port, tls
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.received: Counter[str] = Counter()  # message types the controller sent, by name
        self.closed_after: float | None = None  # seconds from opening to the controller's close
        self.opened = 0.0
        self.dpid: int | None = None  # set: answer as this switch
        self.taken = asyncio.Event()  # the controller asked for its role or synced it: it was admitted
        self._reading: asyncio.Task[None] | None = None

    async def open(self, timeout: float = 10.0) -> str | None:
        """None once connected (TLS handshake included); else why not, as the attacker saw it."""
        self.opened = time.monotonic()
        try:
            self.reader, self.writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.port, ssl=self.tls), timeout)
        except (OSError, TimeoutError) as refused:  # ssl.SSLError is an OSError
            return f"{type(refused).__name__}: {refused}"[:160]
        self._reading = asyncio.create_task(self._read())
        return None

    def play_switch(self, dpid: int) -> None:
        self.dpid = dpid
        self.send(header(ofp.OFPT_HELLO, 0))

    def send(self, data: bytes) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(data)

    async def drain(self) -> bool:
        """False once the controller has closed the connection."""
        if self.writer is None:
            return False
        try:
            await self.writer.drain()
        except (ConnectionError, OSError):
            return False
        return self.closed_after is None

    async def wait_closed(self, seconds: float) -> None:
        """Until the controller closes the connection, or ``seconds``."""
        if self._reading is not None:
            await asyncio.wait([self._reading], timeout=seconds)

    def fate(self) -> str:
        got = ", ".join(f"{count} {kind}" for kind, count in sorted(self.received.items())) or "no message"
        if self.closed_after is None:
            return f"{got}; connection still open after {time.monotonic() - self.opened:.1f} s"
        return f"{got}; closed by the controller after {self.closed_after:.2f} s"

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)

    async def _read(self) -> None:
        assert self.reader is not None
        try:
            while True:
                head = await self.reader.readexactly(HEADER.size)
                _, kind, length, xid = HEADER.unpack(head)
                raw = head + await self.reader.readexactly(max(0, length - HEADER.size))
                self.received[MESSAGE_NAMES.get(kind, f"type {kind}")] += 1
                if self.dpid is not None:
                    self._answer(kind, xid, raw)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            self.closed_after = time.monotonic() - self.opened

    def _answer(self, kind: int, xid: int, raw: bytes) -> None:
        assert self.dpid is not None
        if kind == ofp.OFPT_FEATURES_REQUEST:
            self.send(features_reply(xid, self.dpid, 8))
        elif kind == ofp.OFPT_ECHO_REQUEST:
            self.send(header(ofp.OFPT_ECHO_REPLY, xid, raw[HEADER.size:]))
        elif kind == ofp.OFPT_ROLE_REQUEST:
            role, generation = ROLE.unpack_from(raw, HEADER.size)
            self.send(header(ofp.OFPT_ROLE_REPLY, xid, ROLE.pack(role, generation)))
            self.taken.set()
        elif kind == ofp.OFPT_BARRIER_REQUEST:  # the controller syncs a switch it has taken
            self.send(header(ofp.OFPT_BARRIER_REPLY, xid))
            self.taken.set()
        elif kind == ofp.OFPT_MULTIPART_REQUEST:
            (part,) = struct.unpack_from("!H", raw, HEADER.size)
            if part == ofp.OFPMP_PORT_DESC:
                self.send(port_desc_reply(xid, []))
            elif part == ofp.OFPMP_FLOW:
                self.send(header(ofp.OFPT_MULTIPART_REPLY, xid, MULTIPART.pack(ofp.OFPMP_FLOW, 0)))
            else:
                self.send(error(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_MULTIPART, raw))


MESSAGE_NAMES = {ofp.OFPT_HELLO: "HELLO", ofp.OFPT_ERROR: "ERROR", ofp.OFPT_ECHO_REQUEST: "ECHO_REQUEST",
                 ofp.OFPT_ECHO_REPLY: "ECHO_REPLY", ofp.OFPT_FEATURES_REQUEST: "FEATURES_REQUEST",
                 ofp.OFPT_PACKET_OUT: "PACKET_OUT", ofp.OFPT_FLOW_MOD: "FLOW_MOD", ofp.OFPT_GROUP_MOD: "GROUP_MOD",
                 ofp.OFPT_MULTIPART_REQUEST: "MULTIPART_REQUEST", ofp.OFPT_BARRIER_REQUEST: "BARRIER_REQUEST",
                 ofp.OFPT_ROLE_REQUEST: "ROLE_REQUEST", ofp.OFPT_SET_CONFIG: "SET_CONFIG"}
