"""Admission of SR class streams (802.1Qav) by their worst-case latency bounds (``cbs_bound``). Pure.

A request is admitted when, with it, every port's SR classes still fit their share (802.1Q deltaBandwidth, scaled to
the time the gates leave open), its own bound is within its ``max_latency_ns``, and so is the bound of every stream
admitted before it: a newcomer may not break a promise already made. A refusal names the field, the port or stream,
and carries Qcc's failure code (802.1Q-2022 Table 46-15): 3 for a port's class bandwidth, 21 for the request's own
latency, 7 when it would change an admitted stream's latency past its promise.

Examples
--------
>>> from srfabric.tsn.model.network import Network
>>> net = Network.build([("h1", "host"), ("s1", "switch"), ("h2", "host")], [("h1", "s1"), ("s1", "h2")])
>>> first = ClassStream("cam1", "A", ("h1", "s1", "h2"), 125_000, 200, max_latency_ns=1_000_000)
>>> decision = admit(net, [], first)
>>> round(decision.bound_ns["cam1"]), sorted(decision.ports)
(418916, [('h1', 's1'), ('s1', 'h2')])
>>> greedy = ClassStream("hd", "B", ("h1", "s1", "h2"), 15_000, 1500)  # 822.4 Mbit/s
>>> admit(net, [first], greedy)
Traceback (most recent call last):
...
srfabric.tsn.protect.cbs_classes.Refusal: path: h1-eth1: SR classes would need 837.888 Mbit/s while its gates \
are open, over 75% of 1000 Mbit/s; failure code 3
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from srfabric.tsn.model.network import Network
from srfabric.tsn.protect.cbs_bound import Edge, PortShare, analyse
from srfabric.tsn.protect.cbs_classes import (
    LATENCY_CHANGED,
    MAX_LATENCY_EXCEEDED,
    ClassStream,
    PortWindows,
    Refusal,
    ShaperLimits,
)


@dataclass(frozen=True)
class Admitted:
    """What admitting a request leaves: every stream's bound (ns) and every port's share."""

    bound_ns: dict[str, float]
    ports: dict[Edge, PortShare]


def admit(net: Network, admitted: Sequence[ClassStream], request: ClassStream,
          windows: Mapping[Edge, PortWindows] | None = None, limits: ShaperLimits | None = None) -> Admitted:
    """``request`` beside ``admitted``: the bounds with it, or ``Refusal`` (nothing is kept either way)."""
    if any(stream.id == request.id for stream in admitted):
        raise Refusal("stream_id", f"{request.id} is admitted already", LATENCY_CHANGED)
    analysis = analyse(net, [*admitted, request], windows, limits)
    bound = analysis.bound_ns
    if request.max_latency_ns is not None and bound[request.id] > request.max_latency_ns:
        raise Refusal("max_latency_ns", f"{request.id}: its class {request.sr_class} bound is "
                                        f"{bound[request.id] / 1e3:.1f} us, over the "
                                        f"{request.max_latency_ns / 1e3:g} us asked for", MAX_LATENCY_EXCEEDED)
    keep_promises(admitted, bound, f"admitting {request.id}")
    return Admitted(bound, analysis.ports)


def keep_promises(streams: Iterable[ClassStream], bound_ns: Mapping[str, float], change: str) -> None:
    """``Refusal`` (code 7) naming the first of ``streams`` whose bound under ``change`` passes its promise."""
    for stream in streams:
        if stream.max_latency_ns is not None and bound_ns[stream.id] > stream.max_latency_ns:
            raise Refusal("path", f"{change} would raise the bound of {stream.id} to "
                                  f"{bound_ns[stream.id] / 1e3:.1f} us, over the {stream.max_latency_ns / 1e3:g} us "
                                  "it was promised", LATENCY_CHANGED)
