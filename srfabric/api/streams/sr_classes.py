"""Streams of SR classes A and B (priority 3 and 2) through the API: admitted by the credit-based shaper's latency
bound beside the gate schedule (``tsn.runtime.classes``), each pinned to the path it was admitted on.

A stream of priority 3 (class A) or 2 (class B), one tree, asks for no slot: it is admitted on the first of its
shortest paths (or on the path it names) where its own bound and every bound already promised hold, with what
every port on it would reserve under the 75 % limit; else it is refused (409) with the IEEE 802.1Q Table 46-15
failure code the planner gives (1, 3, 14 or 21; 7 when it would break another stream's bound). A change of the
gate schedule (a time-triggered stream admitted, moved or freed; a new duty cycle) is checked against every
promise first, and refused with code 7 when one would break. Nothing is kept apart from the records: the class
streams are the records of these priorities, read again at each use.

The classes share best effort's gate windows: the analysis opens their gates wherever best effort's is open
(``cbs_settings.open_for_classes``). Every switch queues their frames by their class's mark (``rules.streams.
time_triggered``), and each gate list carries the shapers of the classes its port carries (``shaped``): a port
with class streams and no time-triggered one gets a list that is always open, so that it shapes them too.

>>> sr_class({"priority": 3}), sr_class({"priority": 7}), sr_class({"priority": 2, "num_seamless_trees": 2})
('A', None, None)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from srfabric.api.errors import ApiError, bad_request, in_use
from srfabric.api.streams.qcc import refused_status
from srfabric.controller.controller import Controller
from srfabric.errors import SrfabricError
from srfabric.tsn.gates.gcl import BE_CLASS, TT_CLASS, GateEntry, PortGcl
from srfabric.tsn.model.network import SWITCH, Network
from srfabric.tsn.protect.cbs_classes import CLASS_PRIORITY, ClassStream, Refusal
from srfabric.tsn.protect.cbs_settings import open_for_classes, shapers_of
from srfabric.tsn.runtime.classes import ClassPlanner, ClassRequest

log = logging.getLogger(__name__)

Record = dict[str, Any]
CLASS_OF_PRIORITY = {priority: sr_class for sr_class, priority in CLASS_PRIORITY.items()}


def sr_class(record: Mapping[str, Any]) -> str | None:
    """The record's SR class ("A", "B"), or None: time-triggered, best effort, or redundant (two trees)."""
    if record.get("num_seamless_trees", 1) > 1:
        return None
    return CLASS_OF_PRIORITY.get(record["priority"])


def opened(gcls: Iterable[PortGcl]) -> list[PortGcl]:
    """The gate lists as the analysis takes them: the classes' gates open wherever best effort's is."""
    return [open_for_classes(gcl) for gcl in gcls]


def refused(error: Refusal) -> ApiError:
    """A refusal as the API answers it: 409, the reason, and the status group with its failure code."""
    answer = in_use("StreamNotAdmitted", str(error))
    answer.extra = {"status": refused_status(error.code)}
    return answer


class SrClasses:
    """The class streams of one snapshot's records; ``full_path(record)`` gives a record's talker, switches and
    listener (``ApiError`` naming a port that is none)."""

    def __init__(self, records: Iterable[Record], full_path: Callable[[Record], tuple[str, ...]]) -> None:
        self.records, self.full_path = list(records), full_path

    def planner(self, network: Network, leave_out: str | None = None) -> ClassPlanner:
        """A planner holding the admitted class streams on their paths (one whose ports no longer resolve is left
        out, logged)."""
        planner = ClassPlanner(network)
        for record in self.records:
            cls = sr_class(record)
            if cls is None or record["id"] == leave_out or not record.get("path"):
                continue
            try:
                route = self.full_path(record)
            except (ApiError, SrfabricError) as error:
                log.warning("class stream %s is not counted on this topology: %s", record["id"], error)
                continue
            planner.streams[record["id"]] = ClassStream(record["id"], cls, route, record["period_ns"],
                                                        record["size_bytes"], record["max_latency_ns"])
        return planner

    def admit(self, network: Network, gcls: list[PortGcl], record: Record) -> Record:
        """``record`` admitted beside the other class streams under ``gcls``: the record with the switches of the
        path it was admitted on. ``ApiError`` (409 with the failure code, or 400) if it is not."""
        cls = sr_class(record)
        assert cls is not None
        planner = self.planner(network, leave_out=record["id"])
        route = self.full_path(record)
        request = ClassRequest(record["id"], cls, route[0], route[-1], record["period_ns"], record["size_bytes"],
                               record["max_latency_ns"])
        try:
            stream = planner.admit(request, opened(gcls),
                                   routes=[route] if record["path"] else None)
        except Refusal as error:
            raise refused(error) from None
        except SrfabricError as error:
            raise bad_request(str(error), "StreamBadRequest") from None
        return {**record, "path": list(stream.route[1:-1]), "slot": None, "phase": None}

    def check(self, network: Network, gcls: list[PortGcl], what: str) -> None:
        """Refuse (409, failure code 7) new gate lists under which an admitted class stream's bound breaks."""
        planner = self.planner(network)
        if not planner.streams:
            return
        try:
            planner.check(opened(gcls), what)
        except Refusal as error:
            raise refused(error) from None
        except SrfabricError as error:  # a route the topology no longer has: the class stream's own problem
            log.warning("class streams not checked against %s: %s", what, error)

    def shaped(self, network: Network, gcls: list[PortGcl], cycle_ns: int, controller: Controller) -> list[PortGcl]:
        """``gcls`` with each switch port's class shapers (``cbs_settings.shapers_of``), and an always-open list on
        each switch port that carries class streams but no gate list (named as the switch names it)."""
        planner = self.planner(network)
        if not planner.streams:
            return gcls
        try:
            shares = planner.analysis(opened(gcls)).ports
        except SrfabricError as error:  # a route the topology no longer has: left unshaped, as it is unsteered
            log.warning("class streams not shaped: %s", error)
            return gcls
        out = {(gcl.node, gcl.peer): gcl for gcl in gcls}
        for (node, peer), share in shares.items():
            shapers = shapers_of(share)
            if not shapers or network.kinds[node] != SWITCH:
                continue
            gcl = out.get((node, peer))
            if gcl is None:
                dpid = controller.fabric.dpids_by_name().get(node)
                name = None if dpid is None else controller.port_name(dpid, network.port(node, peer))
                if name is None:
                    continue
                gcl = PortGcl(node, peer, name, cycle_ns, 0, [GateEntry((1 << TT_CLASS) | (1 << BE_CLASS), cycle_ns)])
            out[(node, peer)] = replace(gcl, shapers=shapers)
        return list(out.values())

    def bound_ns(self, network: Network, gcls: list[PortGcl], ident: str) -> int:
        """Admitted class stream ``ident``'s latency bound (ns, talker to listener)."""
        return round(self.planner(network).bounds(opened(gcls))[ident])

    def view(self, network: Network, gcls: list[PortGcl]) -> dict[str, Any]:
        """The class streams (class, path, bound) and each port's reserved rate and shaper settings per class."""
        planner = self.planner(network)
        if not planner.streams:
            return {"streams": [], "ports": []}
        try:
            analysis = planner.analysis(opened(gcls))
        except SrfabricError as error:  # a topology that no longer holds a promise: shown, not raised
            return {"streams": [], "ports": [], "error": str(error)}
        bounds, shares = analysis.bound_ns, analysis.ports
        streams = [{"id": s.id, "class": s.sr_class, "path": list(s.route), "max_latency_ns": s.max_latency_ns,
                    "latency_bound_ns": round(bounds[s.id])} for s in sorted(planner.streams.values(),
                                                                              key=lambda s: s.id)]
        ports = [{"switch": node, "peer": peer, "port": network.interface(node, peer),
                  **{f"class_{cls.lower()}": {"reserved_bps": round(share.reserved_bps[cls]),
                                              "idle_slope_bps": round(share.idle_slope_bps[cls]),
                                              "hi_credit_bits": round(share.hi_credit_bits[cls]),
                                              "lo_credit_bits": round(share.lo_credit_bits[cls])}
                     for cls in share.reserved_bps if share.reserved_bps[cls]}}
                 for (node, peer), share in sorted(shares.items())]
        return {"streams": streams, "ports": ports}
