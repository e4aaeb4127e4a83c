"""The soak's convergence, timed per episode: a run of faults that overlap, from the undo of its last fault until
every switch holds what the leader compiled.

While any fault is in effect the fabric cannot be whole (a link is down, a bridge gone, a function dark), so the
time from one fault's undo to convergence would count the hold of every fault overlapping it. An episode starts
with a fault done while none was in effect, takes in every fault done before it converged, and is timed from the
moment the last of them was undone (the fabric free of faults) to the first read-back in sync. A fault done
while the fabric converges interrupts the timing: the episode goes on and is timed from the next quiet moment.
Each fault also keeps the time from its own undo to its episode's convergence (``Done.converged_s``), which is
what frames lost inside its window are explained by.

One watcher thread reads the switches back, not one per fault: concurrent read-backs would load the controller
they time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from srfabric_tools.bench.soak_faults import CONVERGE_TIMEOUT_S, POLL_S, Done


@dataclass
class Episode:
    """Faults that overlapped, and how long the fabric took once the last of them was undone."""

    faults: list[Done]
    quiet_at: float  # monotonic: when the last of them was undone
    converged_s: float | None  # from ``quiet_at``; None past the timeout
    interrupted: int  # faults done while it converged, which it then took in

    def as_dict(self, start: float) -> dict[str, Any]:
        return {"quiet_s": round(self.quiet_at - start, 3), "faults": len(self.faults),
                "kinds": sorted({d.fault.kind for d in self.faults}), "interrupted": self.interrupted,
                "converged_s": None if self.converged_s is None else round(self.converged_s, 3)}


@dataclass
class Episodes:
    """Faults begin and end here (``begin``, ``end``); ``watch`` times each episode with ``in_sync``."""

    in_sync: Callable[[], bool]
    clock: Callable[[], float] = time.monotonic
    done: list[Episode] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _active: int = 0
    _members: list[tuple[Done, int]] = field(default_factory=list)  # the open episode's faults, each's number
    _undone: dict[int, float] = field(default_factory=dict)
    _quiet_at: float = 0.0
    _begun: int = 0  # faults begun so far: a change while timing means the timing was interrupted
    _interrupted: int = 0

    def begin(self, fault: Done) -> None:
        with self._cond:
            self._active += 1
            self._begun += 1
            self._members.append((fault, self._begun))
            self._cond.notify_all()

    def end(self, fault: Done) -> None:
        with self._cond:
            now = self.clock()
            self._active -= 1
            self._undone[id(fault)] = now
            if self._active == 0:
                self._quiet_at = now
            self._cond.notify_all()

    def settled(self, timeout: float) -> bool:
        """Wait until no episode is open (every fault's convergence timed); False past ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._members, timeout)

    def watch(self, stop: threading.Event) -> None:
        """Time episodes until ``stop`` is set."""
        while not stop.is_set():
            with self._cond:
                if not self._cond.wait_for(lambda: bool(self._members) and self._active == 0, 0.2):
                    continue
                quiet_at, begun = self._quiet_at, self._begun
            self._time(quiet_at, begun, stop)

    def _time(self, quiet_at: float, begun: int, stop: threading.Event) -> None:
        while not stop.is_set():
            if self.in_sync():
                self._close(quiet_at, begun, self.clock() - quiet_at)
                return
            with self._cond:
                if self._begun != begun:  # a fault was done meanwhile: the episode goes on
                    self._interrupted += self._begun - begun
                    return
            if self.clock() - quiet_at > CONVERGE_TIMEOUT_S:
                self._close(quiet_at, begun, None)
                return
            time.sleep(POLL_S)

    def _close(self, quiet_at: float, begun: int, converged_s: float | None) -> None:
        """The episode of the faults numbered up to ``begun`` ends; one begun while the last read-back ran (it
        read the fabric before that fault) opens the next."""
        with self._cond:
            members = [fault for fault, number in self._members if number <= begun]
            self._members = [(fault, number) for fault, number in self._members if number > begun]
            end = quiet_at + converged_s if converged_s is not None else None
            for fault in members:
                undone = self._undone.pop(id(fault), quiet_at)
                fault.converged_s = None if end is None else max(0.0, end - undone)
            self.done.append(Episode(members, quiet_at, converged_s, self._interrupted))
            self._interrupted = 0
            self._cond.notify_all()
