"""The streams' shell: it carries out what a stream decision returns (``StreamEffects``), in the order that keeps
every frame in its window. The streams' entries go out in one sync and the switches confirm them; only then is
one common future base time taken (however long the switches took, it is still ahead) and every gated port's
list applied through the gates adapter (``southbound.gates.Gates``: taprio, or only remembered). A port whose
list did not change keeps the base time it runs with, so the adapter leaves it alone: a change regates the ports
of the paths it touched, not the fabric. A refusal at any step undoes the decision (``effects.undo``) and puts
the previous streams and gates back.

The decisions themselves (admission, moves, redundant trees, the gate control lists) are the core's
(:mod:`srfabric.controller.stream_planning`, :mod:`srfabric.tsn.runtime`); this module does the I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from srfabric.controller.controller import Controller
from srfabric.controller.stream_planning import StreamEffects
from srfabric.errors import ModelError, SrfabricError, Unavailable
from srfabric.model.stream import SteeredStream
from srfabric.southbound.gates import Gates, RecordingGates, VerifiedGates, next_base_time, tai_now_ns
from srfabric.tsn.gates.gcl import PortGcl, same_list

log = logging.getLogger(__name__)


class GatesRefused(SrfabricError):
    """The gates adapter refused a list (the field names the port): nothing of the change stays."""


class GatesUnavailable(SrfabricError):
    """A bridge did not answer (the field names it): nothing of the change stays; retry later."""


class NotInstalled(SrfabricError):
    """The switches did not take the streams' entries: nothing of the change stays."""


def gates_error(error: ModelError | Unavailable) -> GatesRefused | GatesUnavailable:
    """What a gates adapter's refusal (``ModelError``) or silence (``Unavailable``) is to the shell's caller."""
    kind = GatesUnavailable if isinstance(error, Unavailable) else GatesRefused
    return kind(error.field, error.message)


@dataclass
class Installed:
    """What a change sent: flow-mods per switch, every gated port's list, the change's base time and the ports
    whose lists changed (sent at that base time)."""

    sent: dict[int, int] = field(default_factory=dict)
    gcls: list[PortGcl] = field(default_factory=list)
    base_time_ns: int | None = None
    regated: list[str] = field(default_factory=list)


class StreamInstaller:
    """Carries out stream decisions on the controller's switches and through one gates adapter; ``clock`` gives
    TAI nanoseconds (passed in), ``lead_ns`` how far ahead a change's base time lies."""

    def __init__(self, controller: Controller, gates: Gates | None = None, clock: Callable[[], int] | None = None,
                 cycle_ns: int = 1_000_000, lead_ns: int = 200_000_000) -> None:
        self.controller = controller
        self.gates: Gates = gates or RecordingGates()
        self.clock = clock or tai_now_ns
        self.cycle_ns = cycle_ns
        self.lead_ns = lead_ns
        self.gcls: list[PortGcl] = []  # what every gated port runs now
        self.gate_changes = 0  # gate schedules sent (for /metrics)
        self.switch_failures = 0  # ports that did not run their list after its base time (read back)
        self.late_changes = 0  # changes whose lists went out after their base time
        self._verifying: set[asyncio.Task[None]] = set()  # held until done: the loop keeps only weak references

    def at_base_time(self, gcls: list[PortGcl]) -> tuple[int, list[str]]:
        """Give every changed list the next common base time (a cycle boundary ``lead_ns`` ahead); a list its
        port runs already keeps the base time it runs with (every base time is a boundary of the same cycle, so
        it stays in step). Returns the base time and the ports whose lists changed."""
        base_time = next_base_time(self.clock(), self.cycle_ns, self.lead_ns)
        running = {gcl.interface: gcl for gcl in self.gcls}
        regated = []
        for gcl in gcls:
            now = running.get(gcl.interface)
            if now is gcl:  # the very list the port runs (the core gives an unchanged port's list again)
                continue
            if now is not None and same_list(now, gcl):
                gcl.base_time_ns = now.base_time_ns
            else:
                gcl.base_time_ns = base_time
                regated.append(gcl.interface)
        return base_time, regated

    async def install(self, effects: StreamEffects, meanwhile: Callable[[], None]) -> Installed:
        """Steer every stream, then gate every port at one base time; on failure nothing of it stays."""
        previous = (dict(self.controller.streams), list(self.gcls))
        try:
            try:
                self.gates.check(effects.gcls)
            except ModelError as error:
                raise GatesRefused(error.field, error.message) from None
            try:
                sent = await self.controller.replace_streams(effects.steered, check=effects.confirm,
                                                             meanwhile=meanwhile)
            except SrfabricError as error:
                raise NotInstalled(error.field, error.message) from None
            base_time, regated = self.at_base_time(effects.gcls)
            try:  # in a thread: bridges over NETCONF take round trips the API need not wait on
                await asyncio.to_thread(self.gates.apply, effects.gcls)
            except (ModelError, Unavailable) as error:
                await self._restore(*previous)
                raise gates_error(error) from None
        except BaseException:
            effects.undo()
            if self.controller.streams != previous[0]:
                await self._restore(*previous)
            raise
        self._now_running(effects.gcls)
        self._late(base_time, regated)
        self._verify_later(effects.gcls, base_time, regated)
        return Installed(sent, effects.gcls, base_time, regated)

    async def regate(self, gcls: list[PortGcl], undo: Callable[[], None]) -> Installed:
        """``gcls`` on every gated port at one future base time, and no flow entry. On a refusal ``undo`` runs
        and the previous lists go back."""
        base_time, regated = self.at_base_time(gcls)
        try:
            await asyncio.to_thread(self.gates.apply, gcls)  # checks every port first
        except (ModelError, Unavailable) as error:
            undo()
            try:  # the streams did not change: only the gates go back
                await asyncio.to_thread(self.gates.apply, self.gcls)
            except SrfabricError:
                log.exception("could not put the previous gates back")
            raise gates_error(error) from None
        self.gcls = gcls
        self.gate_changes += 1
        self._late(base_time, regated)
        self._verify_later(gcls, base_time, regated)
        return Installed({}, gcls, base_time, regated)

    async def start(self, steered: dict[str, SteeredStream], gcls: list[PortGcl]) -> None:
        """The kept streams where they were, with fresh gates (after a restart)."""
        await self.controller.replace_streams(steered)
        self.at_base_time(gcls)
        self.gcls = gcls
        await asyncio.to_thread(self.gates.apply, gcls)

    def _late(self, base_time_ns: int, regated: list[str]) -> None:
        """A change whose lists reached the gates after their base time switched each port at its next cycle
        boundary, not all at one: counted (``late_changes``) and logged, so the lead can be raised."""
        if regated and self.clock() > base_time_ns:
            self.late_changes += 1
            log.warning("gates: the lists went out after their base time; raise --gate-lead-ms (now %d ms)",
                        self.lead_ns // 1_000_000)

    def _verify_later(self, gcls: list[PortGcl], base_time_ns: int, regated: list[str]) -> None:
        """With gates that report what they run (bridges over NETCONF): after the base time and one cycle, read
        the regated ports back; a bridge that did not switch is logged and counted (``switch_failures``)."""
        changed = set(regated)
        gcls = [gcl for gcl in gcls if gcl.interface in changed]
        if not gcls or not isinstance(self.gates, VerifiedGates):
            return
        gates = self.gates
        wait_s = max(0.0, (base_time_ns + self.cycle_ns - self.clock()) / 1e9)

        async def verify() -> None:
            await asyncio.sleep(wait_s)
            problems = await asyncio.to_thread(gates.switched, gcls)
            self.switch_failures += len(problems)
            for problem in problems:
                log.warning("gates: %s", problem)
        with contextlib.suppress(RuntimeError):  # no loop (a synchronous caller): nothing to read back on
            task = asyncio.get_running_loop().create_task(verify())
            self._verifying.add(task)
            task.add_done_callback(self._verifying.discard)

    def _now_running(self, gcls: list[PortGcl]) -> None:
        self.gcls = gcls
        self.gate_changes += 1 if gcls else 0

    async def _restore(self, streams: dict[str, SteeredStream], gcls: list[PortGcl]) -> None:
        try:
            await self.controller.replace_streams(streams)
            await asyncio.to_thread(self.gates.apply, gcls)
        except SrfabricError:
            log.exception("could not put the previous streams and gates back")
