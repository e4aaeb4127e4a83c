"""Split a route into pathlets that each fit into one header.

The switch that writes a header outputs the pathlet's first hop itself; the
header holds the ports of the following hops. A pathlet must end where the
packet arrives at a switch allowed to write the next header (an SRE switch),
or at the delivering switch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from srfabric.errors import RoutingError
from srfabric.model.fabric import Endpoint
from srfabric.routing.paths import Route


@dataclass(frozen=True)
class Pathlet:
    """At ``start`` (switch, in_port) write ``encoded`` into the header and output ``first_port``."""

    start: Endpoint
    first_port: int
    encoded: tuple[int, ...]
    end: Endpoint


def split_pathlets(route: Route, capacity: int, can_encapsulate: Callable[[int], bool]) -> list[Pathlet]:
    """Greedy split: each pathlet reaches as far as one header allows.

    Parameters
    ----------
    route : Route
        The hops to cover.
    capacity : int
        Ports one header holds.
    can_encapsulate : callable
        Whether a switch (by datapath id) may write a new header.

    Examples
    --------
    >>> from srfabric.routing.paths import Hop, Route
    >>> hops = tuple(Hop(i, 1, (i + 1, 2)) for i in range(1, 6))
    >>> route = Route((1, 9), hops, (6, 3))
    >>> [p.encoded for p in split_pathlets(route, 2, lambda dpid: dpid in (4, 6))]
    [(1, 1), (1,)]
    """
    hops = route.hops
    pathlets: list[Pathlet] = []
    start = 0
    entry = route.entry
    while start < len(hops):
        if not can_encapsulate(hops[start].dpid) and start > 0:
            raise RoutingError("route", f"switch {hops[start].dpid:#x} cannot encapsulate")
        last = min(start + capacity, len(hops) - 1)
        while last < len(hops) - 1 and not can_encapsulate(hops[last + 1].dpid):
            last -= 1
            if last < start:
                raise RoutingError(
                    "route",
                    f"no switch that may re-encapsulate within {capacity} hops after switch "
                    f"{hops[start].dpid:#x}; the path cannot be split into pathlets",
                )
        encoded = tuple(hop.port for hop in hops[start + 1 : last + 1])
        pathlets.append(Pathlet(entry, hops[start].port, encoded, hops[last].arrival))
        entry = hops[last].arrival
        start = last + 1
    return pathlets
