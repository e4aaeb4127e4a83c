"""Pure path computation: hops through service functions, split into encodable pathlets."""

from srfabric.routing.pathlets import Pathlet, split_pathlets
from srfabric.routing.paths import Hop, Route, chain_route, host_route

__all__ = ["Hop", "Pathlet", "Route", "chain_route", "host_route", "split_pathlets"]
