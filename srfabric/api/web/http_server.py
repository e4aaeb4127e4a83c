"""uvicorn's server, stopped at once by ``stop()``.

uvicorn looks at its stop flag every 0.1 s, installs its own signal handlers, and sleeps another 0.1 s in its
shutdown even with no connection open. A restart of ``srfabric serve`` waits for all of that before the new
process may start, and the switches wait with it. Here ``serve``'s own signal handlers call ``stop()``; the wait
ends at once; and the shutdown is uvicorn's own only when connections are open, whose requests then get their
grace time (``timeout_graceful_shutdown``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import uvicorn

HEADER_REFRESH_S = 1.0  # uvicorn refreshes its Date header once a second (``on_tick``)


class PromptServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.stopping = asyncio.Event()

    def stop(self) -> None:
        self.should_exit = True
        self.stopping.set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the caller's handlers call ``stop``

    async def main_loop(self) -> None:
        while not await self.on_tick(0):  # counter 0: the Date header is refreshed on every turn
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), HEADER_REFRESH_S)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        await self.lifespan.shutdown()
