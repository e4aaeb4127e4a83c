"""The OpenFlow server: accepts switch connections and dials switches that listen (over TLS when configured),
bounds the work a peer that has not shaken hands can cause, checks who a switch may be (``admit``), and hands each
ready switch to the controller's callbacks. A refused connection is logged as a security event and counted by
why."""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.logs import security_event
from srfabric.rules.openflow.wire import PacketIn
from srfabric.southbound.channel import SwitchConnection
from srfabric.southbound.dialer import dial_forever

log = logging.getLogger("srfabric.southbound.channel")

MAX_UNSHAKEN = 256  # connections that may be in their handshake at once
HANDSHAKE_S = 5.0  # a peer that has not answered HELLO and FEATURES_REQUEST by then is closed


@dataclass
class OpenFlowServer:
    """Accept switch connections and hand ready (handshaken) switches to callbacks."""

    on_ready: Callable[[SwitchConnection], Awaitable[None]]
    on_message: Callable[[SwitchConnection, Any], Awaitable[None]]
    on_gone: Callable[[SwitchConnection], Awaitable[None]]
    clock: Callable[[], int] = time.perf_counter_ns
    on_packet_in: Callable[[SwitchConnection, PacketIn], None] | None = None  # else packet-ins go to on_message
    connections: set[SwitchConnection] = field(default_factory=set)
    _server: asyncio.Server | None = None
    _listener: socket.socket | None = None  # with TLS: the listening socket, accepted by ``_accept_tls``
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    refused: Counter[str] = field(default_factory=Counter)  # connections that ended before the handshake, by why
    unshaken: int = 0  # connections accepted whose handshake has not ended yet
    dialing: ssl.SSLContext | None = None  # TLS for dialing switches that listen (``dial``); None: plain TCP
    ssl: ssl.SSLContext | None = None  # TLS (``security.switch_identity``); None: plain TCP
    admit: Callable[[SwitchConnection, set[SwitchConnection]], str | None] | None = None  # why one may not connect
    inherited: socket.socket | None = None  # a listening socket handed over (``activation``): used, not bound

    def require_tls(self, folder: Path) -> None:
        """Take switches over TLS only, with certificates of ``folder``'s CA (``srfabric pki``), each switch admitted
        for the datapath ids its certificate names."""
        from srfabric.security.switch_identity import dialing_context, refusal, server_context

        try:
            self.ssl = server_context(folder)
            self.dialing = dialing_context(folder)
        except (OSError, ValueError) as error:
            raise SrfabricError("--openflow-tls", f"cannot load the certificates in {folder}: {error}") from None
        self.admit = refusal

    async def start(self, host: str = "127.0.0.1", port: int = 6653) -> int:
        if self.ssl is None:
            if self.inherited is not None:
                self._server = await asyncio.start_server(self.take, sock=self.inherited)
            else:
                self._server = await asyncio.start_server(self.take, host, port)
            return int(self._server.sockets[0].getsockname()[1])
        # TLS: each accepted socket's handshake is awaited here, so that a refused certificate is seen (asyncio's
        # own TLS server drops such connections silently).
        self._listener = self.inherited or socket.create_server((host, port), backlog=1024)
        self._listener.setblocking(False)
        self._spawn(self._accept_tls(self._listener))
        return int(self._listener.getsockname()[1])

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _refuse(self, peer: str, why: str, reason: str) -> None:
        self.refused[why] += 1
        security_event(log, "switch_refused", f"switch connection from {peer} refused ({why}): {reason}", peer=peer,
                       reason=reason)

    async def _accept_tls(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                client, address = await loop.sock_accept(listener)
            except OSError as error:  # out of descriptors, a connection aborted: accept again shortly
                log.warning("OpenFlow over TLS: accept failed: %s", error)
                await asyncio.sleep(0.1)
                continue
            if self.unshaken >= MAX_UNSHAKEN:
                self.refused["too many before their handshake"] += 1
                client.close()
                continue
            self.unshaken += 1  # counted from the accept: a burst cannot overshoot the cap
            self._spawn(self._tls_handshake(client, f"{address[0]}:{address[1]}"))

    async def _tls_handshake(self, client: socket.socket, peer: str) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        try:
            transport, _ = await loop.connect_accepted_socket(lambda: protocol, client, ssl=self.ssl,
                                                              ssl_handshake_timeout=HANDSHAKE_S)
        except (OSError, TimeoutError) as error:  # ssl.SSLError is an OSError: a certificate refused, or none
            self._refuse(peer, "tls", str(error) or type(error).__name__)
            client.close()
            return
        finally:
            self.unshaken -= 1
        await self.take(reader, asyncio.StreamWriter(transport, protocol, reader, loop))

    def dial(self, host: str, port: int) -> None:
        """Connect to a switch that listens at ``host:port``, and again whenever the connection ends
        (``dialer``); over TLS when ``require_tls`` was called."""
        self._spawn(dial_forever(self.take, host, port, self.dialing, self.dial_failed))

    def dial_failed(self, why: str, reason: str, new: bool) -> None:
        """Every failed attempt is counted; one is logged when its reason is new."""
        self.refused[why] += 1
        if new:
            security_event(log, "switch_unreachable", f"dialing a switch failed ({why}): {reason}", reason=reason)

    async def take(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Shake hands with a switch on a new connection (taken in or dialed), check who it may be, hand it to
        ``on_ready``, and return when the connection ends."""
        conn = SwitchConnection(reader, writer, self.clock)
        if self.unshaken >= MAX_UNSHAKEN:  # a flood of connections that never answer: refuse the rest at once
            self.refused["too many before their handshake"] += 1
            conn.close()
            return
        conn.on_packet_in = self.on_packet_in
        self.connections.add(conn)
        self.unshaken += 1
        reading: asyncio.Task[None] | None = None
        try:
            try:
                reading = asyncio.create_task(conn.read_loop(self.on_message))
                self._tasks.add(reading)
                await conn.handshake(HANDSHAKE_S)
            finally:
                self.unshaken -= 1
            if self.admit is not None and (why := self.admit(conn, self.connections)) is not None:
                raise SrfabricError("identity", why)
            await self.on_ready(conn)
            await conn.closed.wait()
        except (SrfabricError, ConnectionError, OSError, TimeoutError) as error:
            self._refuse(conn.peer, getattr(error, "field", "closed"), str(error) or type(error).__name__)
        finally:
            self.connections.discard(conn)
            conn.close()
            if reading is not None:
                reading.cancel()
                self._tasks.discard(reading)
            if conn.dpid:
                await self.on_gone(conn)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._listener is not None:
            self._listener.close()
        for conn in list(self.connections):
            conn.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
