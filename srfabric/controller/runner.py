"""Run the asyncio controller in a background thread, for synchronous callers such as Mininet scripts."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import uvloop

from srfabric.controller.config import ControllerConfig
from srfabric.controller.controller import Controller
from srfabric.controller.heap import freeze_heap

T = TypeVar("T")


class ControllerThread:
    """Start with ``start()``, call coroutines with ``call()``, end with ``stop()``."""

    def __init__(self, config: ControllerConfig, host: str = "127.0.0.1", port: int = 0, tls: Path | None = None
                 ) -> None:
        # uvloop, as in ``srfabric serve``: a packet-in reaches its handler sooner than with asyncio's own
        # loop (measured side by side, from the loopback to the handler).
        self.loop = uvloop.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="srfabric-controller", daemon=True)
        self.controller: Controller | None = None
        self.config = config
        self.host, self.port = host, port
        self.tls = tls  # a pki folder (``srfabric pki``): switches connect over TLS only, with its certificates

    def start(self) -> int:
        self.thread.start()

        async def boot() -> int:
            self.controller = Controller(self.config)
            if self.tls is not None:
                self.controller.server.require_tls(self.tls)
            return await self.controller.start(self.host, self.port)

        self.port = self.call(boot())
        freeze_heap()  # the caller's heap so far is not the controller's to walk (see ``heap``)
        return self.port

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        """Stop the controller and its loop; a loop never started (or whose controller failed to boot) is closed
        too, so that no loop or thread outlives the runner."""
        if not self.thread.is_alive():
            if self.thread.ident is None and not self.loop.is_closed():
                self.loop.close()
            return
        try:
            if self.controller is not None:
                self.call(self.controller.stop(), timeout=5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=5)
            if not self.thread.is_alive():
                self.loop.close()
