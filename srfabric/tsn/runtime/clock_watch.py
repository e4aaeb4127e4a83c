"""The bridges' gPTP states as srfabric last read them (``ClockWatch.poll``, the reader passed in): what the
scheduler asks before it schedules a stream through a bridge, what the fabric view shows, and which bridges came
back within the bound (their gates are then sent again).

>>> from srfabric.tsn.model.gptp import ClockReading
>>> offsets = {"s2": 300}
>>> watch = ClockWatch({"s2": "/run/ptp4l-s2"}, 1000,
...                    lambda bridge, _: ClockReading(bridge, offsets[bridge], True, "gm", ("SLAVE",)))
>>> watch.poll(), watch.unsynced(["s1", "s2"]) is None
([], True)
>>> offsets["s2"] = 5000
>>> watch.poll(), watch.unsynced(["s1", "s2"]).reason
([], 'offset 5000 ns from grandmaster gm, over the 1000 ns bound')
>>> offsets["s2"] = 200
>>> watch.poll()
['s2']

A bridge that follows a grandmaster the others do not (the domain split: it lost its path to the grandmaster and
elected itself, say) is not synchronised, whatever its offset:

>>> masters = {"s1": "gm", "s2": "gm", "s3": "s3-itself"}
>>> split = ClockWatch({name: "" for name in masters}, 1000,
...                    lambda bridge, _: ClockReading(bridge, 0, True, masters[bridge], ("MASTER",)))
>>> split.poll(), split.unsynced(["s3"]).reason
([], 'follows grandmaster s3-itself, not gm which 2 of 3 bridges follow (the gPTP domain is split)')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from srfabric.tsn.model.gptp import ClockReading, ClockState, judge, one_domain

Reader = Callable[[str, str], ClockReading]  # (bridge, its ptp4l socket) -> a reading


class ClockWatch:
    def __init__(self, sockets: dict[str, str], bound_ns: int, read: Reader) -> None:
        self.sockets, self.bound_ns, self.read = dict(sockets), bound_ns, read
        self.states: dict[str, ClockState] = {}

    def poll(self) -> list[str]:
        """Read every bridge once; the bridges that were out of sync and are now within the bound."""
        back = []
        states = {bridge: judge(self.read(bridge, path), self.bound_ns)
                  for bridge, path in sorted(self.sockets.items())}
        for bridge, state in one_domain(states).items():
            before = self.states.get(bridge)
            if state.synced and before is not None and not before.synced:
                back.append(bridge)
            self.states[bridge] = state
        return back

    def unsynced(self, switches: Iterable[str]) -> ClockState | None:
        """The first of ``switches`` that runs gPTP and is not synchronised (a bridge not yet read counts as
        not synchronised); None when all that run it are."""
        for name in switches:
            if name in self.sockets:
                state = self.states.get(name) or ClockState(name, False, None, "", "not read yet")
                if not state.synced:
                    return state
        return None

    def view(self) -> dict[str, dict[str, Any]]:
        """For the fabric view: each bridge's state, offset, grandmaster and the bound."""
        return {bridge: {"synced": state.synced, "offset_ns": state.offset_ns, "grandmaster": state.grandmaster,
                         "reason": state.reason, "bound_ns": self.bound_ns}
                for bridge, state in sorted(self.states.items())}
