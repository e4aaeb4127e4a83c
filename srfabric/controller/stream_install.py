"""The streams' shell: it carries out what a stream decision returns (``StreamEffects``), in the order that keeps
every frame in its window. The streams' entries go out in one sync and the switches confirm them; only then is
one common future base time taken (however long the switches took, it is still ahead) and every gated port's
list applied through the gates adapter (``southbound.gates.Gates``: taprio, or only remembered). A refusal at
any step undoes the decision (``effects.undo``) and puts the previous streams and gates back.

The decisions themselves (admission, moves, redundant trees, the gate control lists) are the core's
(:mod:`srfabric.controller.stream_planning`, :mod:`srfabric.tsn.runtime`); this module does the I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from srfabric.controller.controller import Controller
from srfabric.controller.stream_planning import StreamEffects
from srfabric.errors import ModelError, SrfabricError
from srfabric.model.stream import SteeredStream
from srfabric.southbound.gates import Gates, RecordingGates, next_base_time, tai_now_ns
from srfabric.tsn.gates.gcl import PortGcl

log = logging.getLogger(__name__)


class GatesRefused(SrfabricError):
    """The gates adapter refused a list (the field names the port): nothing of the change stays."""


class NotInstalled(SrfabricError):
    """The switches did not take the streams' entries: nothing of the change stays."""


@dataclass
class Installed:
    """What a change sent: flow-mods per switch, the lists applied and their common base time."""

    sent: dict[int, int] = field(default_factory=dict)
    gcls: list[PortGcl] = field(default_factory=list)
    base_time_ns: int | None = None


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

    def at_base_time(self, gcls: list[PortGcl]) -> int:
        """Give every list the next common base time (a cycle boundary ``lead_ns`` ahead); returns it."""
        base_time = next_base_time(self.clock(), self.cycle_ns, self.lead_ns)
        for gcl in gcls:
            gcl.base_time_ns = base_time
        return base_time

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
            base_time = self.at_base_time(effects.gcls)
            try:
                self.gates.apply(effects.gcls)
            except ModelError as error:
                await self._restore(*previous)
                raise GatesRefused(error.field, error.message) from None
        except BaseException:
            effects.undo()
            if self.controller.streams != previous[0]:
                await self._restore(*previous)
            raise
        self._now_running(effects.gcls)
        return Installed(sent, effects.gcls, base_time)

    def regate(self, gcls: list[PortGcl], undo: Callable[[], None]) -> Installed:
        """``gcls`` on every gated port at one future base time, and no flow entry. On a refusal ``undo`` runs
        and the previous lists go back."""
        base_time = self.at_base_time(gcls)
        try:
            self.gates.apply(gcls)  # checks every port first
        except ModelError as error:
            undo()
            try:  # the streams did not change: only the gates go back
                self.gates.apply(self.gcls)
            except SrfabricError:
                log.exception("could not put the previous gates back")
            raise GatesRefused(error.field, error.message) from None
        self.gcls = gcls
        self.gate_changes += 1
        return Installed({}, gcls, base_time)

    async def start(self, steered: dict[str, SteeredStream], gcls: list[PortGcl]) -> None:
        """The kept streams where they were, with fresh gates (after a restart)."""
        await self.controller.replace_streams(steered)
        self.at_base_time(gcls)
        self.gcls = gcls
        self.gates.apply(gcls)

    def _now_running(self, gcls: list[PortGcl]) -> None:
        self.gcls = gcls
        self.gate_changes += 1 if gcls else 0

    async def _restore(self, streams: dict[str, SteeredStream], gcls: list[PortGcl]) -> None:
        try:
            await self.controller.replace_streams(streams)
            self.gates.apply(gcls)
        except SrfabricError:
            log.exception("could not put the previous streams and gates back")
