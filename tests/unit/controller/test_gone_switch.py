"""A switch whose connection has closed, while the controller still holds its channel (a bridge deleted, its
channel not yet reaped): a push and barrier to it fail as a disconnection, which a sync handles, rather than with
the event loop's error about a closed transport (uvloop, as ``serve`` runs; a real TCP pair on loopback)."""

from __future__ import annotations

import asyncio

import pytest
import uvloop
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.rules.openflow.ofbind import PROTOCOL
from srfabric.southbound.channel import SwitchError
from tests.unit.controller.loopback import loopback_channel

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("settle_s", [0.0, 0.05])  # closing, then closed (uvloop refuses a write to it)
def test_a_barrier_to_a_closed_connection_fails_as_a_disconnection(settle_s: float) -> None:
    async def scenario() -> str:
        async with loopback_channel() as (conn, _):
            conn.writer.transport.abort()  # the connection is gone; the channel is still held
            await asyncio.sleep(settle_s)
            try:
                await conn.start_barrier(timeout=5, before=[parser.OFPEchoRequest(PROTOCOL, data=b"x")])
            except SwitchError as error:
                return str(error)
        return "answered"

    assert "disconnected" in uvloop.run(scenario())
