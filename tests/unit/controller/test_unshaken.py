"""Peers that connect to the OpenFlow port and never shake hands: each is closed after the handshake's time, and
past a cap the rest are refused at once, counted by why (a real server on loopback; the peers are raw sockets)."""

from __future__ import annotations

import asyncio

import pytest

from srfabric.southbound import server as channel
from srfabric.southbound.server import OpenFlowServer


async def nothing(*_: object) -> None:
    return None


def test_silent_peers_are_closed_and_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel, "HANDSHAKE_S", 0.3)
    monkeypatch.setattr(channel, "MAX_UNSHAKEN", 2)

    async def scenario() -> tuple[list[bytes], dict[str, int]]:
        server = OpenFlowServer(nothing, nothing, nothing)
        port = await server.start("127.0.0.1", 0)
        peers = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        ends = []
        for reader, _ in peers:  # each gets HELLO and FEATURES_REQUEST, then the end (the third: the end at once)
            data = b""
            while chunk := await asyncio.wait_for(reader.read(4096), 5):
                data += chunk
            ends.append(data)
        for _, writer in peers:
            writer.close()
        await server.stop()
        return ends, dict(server.refused)

    ends, refused = asyncio.run(scenario())
    assert [len(data) > 0 for data in ends] == [True, True, False]
    assert refused["too many before their handshake"] == 1 and sum(refused.values()) == 3, refused
