"""The srfabric controller's shell: it owns the OpenFlow server, the switch connections, the loops and the
waits for barriers, and hands every event to the decision core (``core.ControllerCore``), writing what it
returns. The core keeps every switch's tables equal to what the compile engine says they should hold.

Reconciliation: the core remembers what each switch holds, compiles the
desired entries after every change, and plans only the difference (deletes,
then adds); the shell sends it with a barrier per switch and reports success
once every switch confirmed. When a switch connects, what it holds is read back (flow table and groups), so
a restarted controller changes only what differs: no flush, no duplicates. Each
entry's cookie carries a digest of the entry (``wire_cookie``), which is how an
entry read back is known to be exactly the one that would be sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from srfabric.controller.channels import SwitchChannels
from srfabric.controller.config import ControllerConfig, FlowSetup
from srfabric.controller.core import ControllerCore
from srfabric.controller.reconcile import Push
from srfabric.controller.sync_rounds import sync_rounds
from srfabric.controller.taking import read_meters
from srfabric.errors import ModelError, SrfabricError
from srfabric.model.chain import Chain
from srfabric.model.fabric import Fabric, Host, ServiceFunction
from srfabric.model.stream import SteeredStream
from srfabric.rules.entries import FlowEntry

log = logging.getLogger(__name__)


class Controller:
    def __init__(self, config: ControllerConfig | None = None) -> None:
        self.core = ControllerCore(config or ControllerConfig())
        self._lock = asyncio.Lock()
        self._dirty = asyncio.Event()
        self._urgent = asyncio.Event()  # a link or function went down: sync at once, cutting the settling short
        self.channels = SwitchChannels(self.core, self._dirty, self._urgent)
        self.switches = self.channels.switches  # connected switches by datapath id
        self.server = self.channels.server
        self._tasks: list[asyncio.Task[None]] = []
        self.sync_seconds: deque[float] = deque(maxlen=10_000)  # the last syncs that sent anything, how long each

    # -- the core's state, read through --------------------------------------------------
    # -- roles, kept by the channels (``SwitchChannels``) ------------------------------------
    @property
    def following(self) -> bool:
        return self.channels.following

    @following.setter
    def following(self, following: bool) -> None:
        self.channels.following = following

    @property
    def generation(self) -> int | None:
        return self.channels.generation

    @generation.setter
    def generation(self, generation: int | None) -> None:
        self.channels.generation = generation

    @property
    def generation_seen(self) -> Callable[[], int]:
        return self.channels.generation_seen

    @generation_seen.setter
    def generation_seen(self, seen: Callable[[], int]) -> None:
        self.channels.generation_seen = seen

    @property
    def on_deposed(self) -> Callable[[str], None] | None:
        return self.channels.on_deposed

    @on_deposed.setter
    def on_deposed(self, told: Callable[[str], None] | None) -> None:
        self.channels.on_deposed = told

    async def lead(self, generation: int) -> None:
        """Stop following and take every connected switch as MASTER (``SwitchChannels.lead``)."""
        await self.channels.lead(generation)

    @property
    def config(self) -> ControllerConfig:
        return self.core.config

    @property
    def fabric(self) -> Fabric:
        return self.core.fabric

    @fabric.setter
    def fabric(self, fabric: Fabric) -> None:
        self.core.fabric = fabric

    @property
    def chains(self) -> dict[str, Chain]:
        return self.core.chains

    @property
    def streams(self) -> dict[str, SteeredStream]:
        return self.core.streams

    @property
    def problems(self) -> list[SrfabricError]:
        return self.core.problems

    @property
    def setups(self) -> deque[FlowSetup]:
        return self.core.reactive.setups

    @property
    def flows(self) -> dict[int, dict[Any, FlowEntry]]:
        return self.core.reactive.flows

    @property
    def installed(self) -> dict[int, dict[Any, int]]:
        return self.core.reconciler.installed

    @property
    def flow_mods(self) -> dict[int, int]:
        return self.core.reconciler.flow_mods

    @property
    def flow_mod_kinds(self) -> dict[tuple[int, str], int]:
        return self.core.reconciler.flow_mod_kinds

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 6653) -> int:
        bound = await self.server.start(host, port)
        self._tasks.append(asyncio.create_task(sync_rounds(
            self._dirty, self._urgent, self.sync, lambda: self.following and not self.core.taken,
            lambda: self.core.fabric.version, self.config.lldp_interval)))
        self._tasks.append(asyncio.create_task(self.channels.lldp_loop()))
        return bound

    async def stop(self) -> None:
        log.info("controller stopping on request (%d switches connected); their entries stay", len(self.switches))
        await cancelled([*self._tasks, *self.channels.flow_tasks])
        await self.server.stop()

    # -- northbound --------------------------------------------------------------------
    def add_function(self, function: ServiceFunction) -> None:
        """Declare a service function's ports (they are trusted and never fabric links)."""
        self.channels.do(self.core.add_function(function))

    def remove_function(self, name: str) -> None:
        self.channels.do(self.core.remove_function(name))

    def place(self, functions: Mapping[str, ServiceFunction], hosts: Mapping[str, Host]) -> None:
        """The service functions and hosts the API declares (``ControllerCore.place``); a host it refuses still
        leaves the functions placed before it, and a sync to follow them."""
        before = self.core.fabric.version
        try:
            self.channels.do(self.core.place(functions, hosts))
        except SrfabricError:
            if self.core.fabric.version != before:
                self._dirty.set()
            raise

    async def add_chain(self, chain: Chain) -> None:
        """Install a chain; returns once every switch confirmed its entries with a barrier.

        A chain that cannot be routed or conflicts raises and changes nothing.
        """
        if chain.name in self.chains:
            raise ModelError("name", f"chain {chain.name!r} exists already")
        await self.replace_chains({**self.chains, chain.name: chain}, check=[chain.name])

    async def remove_chain(self, name: str) -> None:
        if self.core.chains.pop(name, None) is None:
            raise ModelError("name", f"chain {name!r} is unknown")
        await self.sync()

    async def replace_chains(self, chains: dict[str, Chain], check: list[str] | None = None,
                             meanwhile: Callable[[], None] | None = None) -> None:
        """Make ``chains`` the installed set in one sync (an update of several chains at once).

        The chains named in ``check`` are checked against the others first; on any
        error nothing changes. Returns once every switch confirmed with a barrier;
        ``meanwhile`` runs while the switches work (see ``sync``).
        """
        self.core.check_chains(chains, set(check or []))
        old, self.core.chains = self.core.chains, dict(chains)
        await self._sync_or_undo(lambda: setattr(self.core, "chains", old), meanwhile)

    async def replace_streams(self, streams: dict[str, SteeredStream], check: list[str] | None = None,
                              meanwhile: Callable[[], None] | None = None) -> dict[int, int]:
        """Make ``streams`` the installed set in one sync, as ``replace_chains`` does for chains.

        Returns the flow-mods each switch received (only the talkers' edges, as transit holds no stream state).
        """
        self.core.check_streams(streams, set(check or []))
        old, self.core.streams = self.core.streams, dict(streams)
        self.core.reconciler.sent = {}
        await self._sync_or_undo(lambda: setattr(self.core, "streams", old), meanwhile)
        return dict(self.core.reconciler.sent)

    async def _sync_or_undo(self, undo: Callable[[], None], meanwhile: Callable[[], None] | None) -> None:
        """Sync; when a switch refuses, ``undo`` the change and sync again to take back what did get installed."""
        try:
            await self.sync(meanwhile)
        except SrfabricError:
            undo()
            with contextlib.suppress(SrfabricError):
                await self.sync()
            raise

    def port_name(self, dpid: int, port: int) -> str | None:
        """The name a connected switch gave its port (``s1-eth3``), or None."""
        conn = self.switches.get(dpid)
        info = conn.ports.get(port) if conn is not None else None
        return info.name if info is not None else None

    def request_sync(self) -> None:
        """Sync soon (after the usual settling), as after any change the controller sees itself."""
        self._dirty.set()

    def forget_routes(self) -> None:
        """Empty the route cache, so that each pair's next new flow searches its path again."""
        self.core.forget_routes()

    # -- reconciliation ----------------------------------------------------------------
    async def sync(self, meanwhile: Callable[[], None] | None = None) -> None:
        """Bring every connected switch to the compiled state and wait for its barrier (its duration is kept when
        it sent anything). ``meanwhile`` runs once everything is sent and before the replies are awaited, so that
        other work overlaps the switches'; what it raises is raised once the switches have answered."""
        if self.following and not self.core.taken:
            return  # a follower MASTER of no switch: the leader keeps them
        async with self._lock:
            self._dirty.clear()  # this sync covers every change made so far
            self._urgent.clear()
            started = self.config.clock()
            confirms = [self._confirm(push, self.switches[push.dpid].start_barrier(before=push.messages))
                        for push in self.core.planned_sync()]
            failure: BaseException | None = None
            if meanwhile is not None:
                try:
                    meanwhile()
                except Exception as error:  # noqa: BLE001 - raised below, once the switches answered
                    failure = error
            results = await asyncio.gather(*confirms, return_exceptions=True)
            for result in [*results, failure]:  # every push has finished before any failure is reported
                if isinstance(result, BaseException):
                    raise result
            if confirms:
                self.sync_seconds.append((self.config.clock() - started) / 1e9)
            if self.config.on_synced is not None:
                self.config.on_synced(self.fabric)

    async def _confirm(self, push: Push, barrier: Awaitable[None]) -> None:
        """Await a push's barrier, then record what the switch holds."""
        try:
            await barrier
        except SrfabricError:
            self.core.reconciler.failed(push)
            if push.held_meters or push.wanted_meters:  # added or not: the switch says (ADD and MODIFY differ)
                with contextlib.suppress(SrfabricError):
                    self.core.reconciler.installed_meters[push.dpid] = await read_meters(self.switches[push.dpid])
            raise
        self.core.reconciler.confirmed(push)

    async def wait_until(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if loop.time() > deadline:
                raise SrfabricError("timeout", f"{what} not reached within {timeout} s")
            await asyncio.sleep(0.05)
        await self.sync()


async def cancelled(tasks: list[asyncio.Task[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has ended."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
