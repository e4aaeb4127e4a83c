"""The newest report under each key, with when it came: what the API keeps of the reports the edges and end
systems send (counters kept in memory, starting again with their sender).

>>> kept = NewestReports[str](clock=lambda: 5.0)
>>> kept.put("h3-eth0", "first"); kept.put("h3-eth0", "second")
>>> kept.reports
{'h3-eth0': (5.0, 'second')}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

R = TypeVar("R")


class NewestReports(Generic[R]):
    """Reports by key, each with the ``clock`` (seconds) when it came."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.reports: dict[str, tuple[float, R]] = {}

    def put(self, key: str, report: R) -> None:
        self.reports[key] = (self.clock(), report)
