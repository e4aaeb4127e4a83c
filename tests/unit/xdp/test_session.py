"""The XDP agent outlives its controller: a session that ends (closed, or garbled) is connected again with the
table kept, and said once per outage; a TLS handshake refused before any session ends the agent (configuration)."""

from __future__ import annotations

import asyncio
import logging
import ssl

import pytest

from srfabric.rules.entries import FlowEntry, Kind, Output, cookie, match
from srfabric.xdp import session
from srfabric.xdp.agent import XdpAgent


class Listening:
    """A controller that takes each connection, reads its HELLO and then does what ``plan`` says of it."""

    def __init__(self, plan: list[str]) -> None:
        self.plan, self.connections = plan, 0
        self.done = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await reader.readexactly(8)  # the agent's HELLO
        step = self.plan[self.connections - 1] if self.connections <= len(self.plan) else "hold"
        if step == "garble":
            writer.write(b"\x04\x00\x00\x02\x00\x00\x00\x01")  # a header whose length is under its own size
            await writer.drain()
        elif step == "hold":
            self.done.set()
            await asyncio.sleep(3600)
        writer.close()


def test_a_session_that_ends_is_connected_again_with_the_table_kept(monkeypatch: pytest.MonkeyPatch,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(session, "RETRY_S", 0.01)
    agent = XdpAgent(0x101, {}, "mac-nibble", "test")
    kept = FlowEntry(1, 100, match(eth_type=0x0800, ipv4_dst=1), (Output(2),), cookie=cookie(Kind.ROUTE))
    agent.table[kept.key] = kept

    async def run() -> int:
        controller = Listening(["close", "garble", "close"])
        server = await asyncio.start_server(controller.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        task = asyncio.create_task(session.keep_serving(agent, "127.0.0.1", port))
        await asyncio.wait_for(controller.done.wait(), 10)
        task.cancel()
        server.close()
        return controller.connections

    with caplog.at_level(logging.WARNING, logger="srfabric.xdp.agent"):
        assert asyncio.run(run()) == 4
    assert agent.table == {kept.key: kept}
    said = [record.getMessage() for record in caplog.records]
    assert sum("gone" in line for line in said) == 3 and sum("back" in line for line in said) == 3, said


def test_a_tls_handshake_refused_before_any_session_ends_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = XdpAgent(0x101, {}, "mac-nibble", "test")

    async def refused(*_: object) -> None:
        raise ssl.SSLError("certificate verify failed")

    monkeypatch.setattr(agent, "serve", refused)
    with pytest.raises(ssl.SSLError):
        asyncio.run(session.keep_serving(agent, "127.0.0.1", 1, ssl.create_default_context()))
