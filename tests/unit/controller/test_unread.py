"""A switch that stops reading cannot make the controller hold its messages without bound: past the cap of unsent
bytes its connection is closed (a real TCP pair on loopback; the switch's end never reads)."""

from __future__ import annotations

import asyncio

import pytest
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.rules.openflow.ofbind import PROTOCOL
from srfabric.southbound import channel
from tests.unit.controller.loopback import loopback_channel


def test_a_switch_that_reads_nothing_is_closed_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel, "MAX_UNSENT_BYTES", 1 << 20)

    async def scenario() -> bool:
        async with loopback_channel() as (conn, _):
            for _ in range(2000):  # up to ~120 MB offered; the switch reads none of it
                conn.send_all([parser.OFPEchoRequest(PROTOCOL, data=b"x" * 60_000)])
                await asyncio.sleep(0)
                if conn.writer.is_closing():
                    break
            await asyncio.sleep(0.05)
            # Closed at once, the unsent bytes dropped (a graceful close would wait for the switch to read them).
            return conn.writer.is_closing() and conn.writer.transport.get_write_buffer_size() == 0

    assert asyncio.run(scenario())
