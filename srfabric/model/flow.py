"""An IPv4 flow as the reactive path sees it: plain data, shared by the packet parser, the rules and the core."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FiveTuple:
    """What identifies an IPv4 flow; ports are 0 for protocols without them."""

    src: str
    dst: str
    proto: int
    sport: int = 0
    dport: int = 0
