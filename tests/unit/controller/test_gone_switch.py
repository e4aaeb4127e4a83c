"""A switch whose connection has closed, while the controller still holds its channel (a bridge deleted, its
channel not yet reaped): a push and barrier to it fail as a disconnection, which a sync handles, rather than with
the event loop's error about a closed transport (uvloop, as ``serve`` runs; a real TCP pair on loopback)."""

from __future__ import annotations

import asyncio

import pytest
import uvloop
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.rules.openflow.ofbind import PROTOCOL
from srfabric.southbound.channel import SwitchConnection, SwitchError

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("settle_s", [0.0, 0.05])  # closing, then closed (uvloop refuses a write to it)
def test_a_barrier_to_a_closed_connection_fails_as_a_disconnection(settle_s: float) -> None:
    async def scenario() -> str:
        accepted: asyncio.Queue[SwitchConnection] = asyncio.Queue()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await accepted.put(SwitchConnection(reader, writer))

        server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
        _, switch = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
        conn = await accepted.get()
        conn.writer.transport.abort()  # the connection is gone; the channel is still held
        await asyncio.sleep(settle_s)
        try:
            await conn.start_barrier(timeout=5, before=[parser.OFPEchoRequest(PROTOCOL, data=b"x")])
        except SwitchError as error:
            return str(error)
        finally:
            switch.close()
            server.close()
        return "answered"

    assert "disconnected" in uvloop.run(scenario())
