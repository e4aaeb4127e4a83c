"""A controller's channel to a "switch" that is a plain TCP socket on loopback: the channel as the server makes
it, the switch's end to leave silent or close, and the server to close after."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from srfabric.southbound.channel import SwitchConnection


@asynccontextmanager
async def loopback_channel() -> AsyncIterator[tuple[SwitchConnection, asyncio.StreamWriter]]:
    """The channel and the switch's end of it; both closed when the block ends."""
    accepted: asyncio.Queue[SwitchConnection] = asyncio.Queue()

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put(SwitchConnection(reader, writer))

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    _, switch = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
    try:
        yield await accepted.get(), switch
    finally:
        switch.close()
        server.close()
