"""Each port's credit-based shapers as a bridge is told them: the ``ieee802-dot1q-cbsa-bridge`` parameter table over
NETCONF, and Linux's ``cbs`` qdiscs ranked under ``taprio``'s best-effort class (``tsn.gates.shaping``). Pure.

A NETCONF bridge scales the admin-idle-slope it is given by its cycle over the time the class's gate is open
(802.1Q 8.6.8.2). That open time holds the guard bands, which the bound counts as closed; so the bridge is given
the slope the bound assumes times the cycle's time outside the time-triggered windows over the cycle, which it
scales back to at least that slope. Linux's ``cbs`` does not see ``taprio``'s gates, so it gets the slope already
scaled and 802.1Q's credits. Slopes and the highest credit are rounded up, the lowest down. Linux's soft ``cbs``
is not 802.1Q's shaper, though: its credit builds only while negative (capped at hicredit), also while taprio's
gates are closed, and it counts frames without preamble, gap and FCS unless the root qdisc has a size table
(``stab overhead 24``); the bound is not shown to hold for it.

Examples
--------
>>> from srfabric.tsn.model.network import Network
>>> from srfabric.tsn.protect.cbs_bound import analyse
>>> from srfabric.tsn.protect.cbs_classes import ClassStream
>>> net = Network.build([("h1", "host"), ("s1", "switch"), ("h2", "host")], [("h1", "s1"), ("s1", "h2")])
>>> share = analyse(net, [ClassStream("cam", "A", ("h1", "s1", "h2"), 125_000, 200)]).ports[("s1", "h2")]
>>> shapers_of(share)
(ClassShaper(priority=3, idle_kbit=15488, send_kbit=-984512, hi_bytes=28, lo_bytes=-239),)
>>> cbsa_document({"s1-eth2": share})["ietf-interfaces:interfaces"]["interface"][0]["ieee802-dot1q-bridge:\
bridge-port"]["ieee802-dot1q-cbsa-bridge:cbsa"]
{'cbsa-parameter-table': [{'traffic-class': 3, 'admin-idle-slope': '15488000'}]}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from srfabric.tsn.gates.gcl import ClassShaper, GateEntry, PortGcl
from srfabric.tsn.gates.shaping import port_commands
from srfabric.tsn.protect.cbs_bound import PortShare
from srfabric.tsn.protect.cbs_classes import CLASS_PRIORITY, SR_CLASSES

# Where an SR class's frames queue: with eight traffic classes, 802.1Q Table 8-5 maps priorities 2 and 3 to
# traffic classes 2 and 3, the class's own priority.
TRAFFIC_CLASS = dict(CLASS_PRIORITY)


def open_for_classes(gcl: PortGcl, traffic_classes: Iterable[int] = TRAFFIC_CLASS.values()) -> PortGcl:
    """``gcl`` with the SR classes' gates open wherever best effort's is, and the classes in its taprio map.

    >>> gcl = PortGcl("s1", "s2", "s1-eth2", 1000, 0, [GateEntry(1, 600), GateEntry(2, 400)])
    >>> opened = open_for_classes(gcl)
    >>> [entry.mask for entry in opened.entries], opened.sr_classes
    ([13, 2], (3, 2))
    """
    classes = tuple(sorted(set(traffic_classes), reverse=True))
    sr_mask = sum(1 << tc for tc in classes)
    be_gate = 1 << gcl.be_class
    entries = [GateEntry(entry.mask | sr_mask if entry.mask & be_gate else entry.mask, entry.duration_ns)
               for entry in gcl.entries]
    return replace(gcl, entries=entries, sr_classes=classes)


def shaped_port(gcl: PortGcl, share: PortShare) -> list[str]:
    """A gated port's Linux commands with its SR classes: its ``taprio`` (the classes share best effort's traffic
    class and gate), then the classes ranked above best effort and each shaped by a ``cbs`` (``shaping``).

    >>> from srfabric.tsn.protect.cbs_bound import analyse
    >>> from srfabric.tsn.protect.cbs_classes import ClassStream
    >>> from srfabric.tsn.model.network import Network
    >>> net = Network.build([("h1", "host"), ("s1", "switch"), ("h2", "host")], [("h1", "s1"), ("s1", "h2")])
    >>> share = analyse(net, [ClassStream("cam", "A", ("h1", "s1", "h2"), 125_000, 200)]).ports[("s1", "h2")]
    >>> gcl = PortGcl("s1", "h2", "s1-eth2", 1_000_000, 0, [GateEntry(2, 100_000), GateEntry(1, 900_000)])
    >>> taprio, prio, to_a, cbs, taprio_again = shaped_port(gcl, share)
    >>> " num_tc 2 map 0 0 0 0 0 0 0 1 " in taprio, cbs.split(" cbs ")[0]
    (True, 'tc qdisc replace dev s1-eth2 parent 10:1')
    """
    shaped = replace(gcl, shapers=shapers_of(share))
    return port_commands(shaped, shaped_before=False)


def shapers_of(share: PortShare) -> tuple[ClassShaper, ...]:
    """The port's shaper of each class it carries, as Linux's ``cbs`` takes them: slopes in kbit/s (the idle slope
    rounded up), credits in bytes (the highest rounded up, the lowest down)."""
    shapers = []
    for cls in SR_CLASSES:
        if not share.reserved_bps[cls]:
            continue
        idle_kbit = math.ceil(share.idle_slope_bps[cls] / 1000)
        shapers.append(ClassShaper(CLASS_PRIORITY[cls], idle_kbit, idle_kbit - math.ceil(share.rate_bps / 1000),
                                   math.ceil(share.hi_credit_bits[cls] / 8),
                                   math.floor(share.lo_credit_bits[cls] / 8)))
    return tuple(shapers)


def cbsa_document(shares: Mapping[str, PortShare], traffic_classes: Mapping[str, int] | None = None
                  ) -> dict[str, Any]:
    """``ietf-interfaces`` JSON (RFC 7951) with each named port's ``cbsa-parameter-table``: the reserved rate of
    each class it carries, in bits per second (a uint64, so a string), under the traffic class that holds the SR
    class's queue on that bridge (``traffic_classes``; by default 802.1Q's with eight traffic classes)."""
    traffic_classes = traffic_classes or TRAFFIC_CLASS
    interfaces = []
    for name, share in sorted(shares.items()):
        outside = (share.cycle_ns - share.windows_ns) / share.cycle_ns
        rows = [{"traffic-class": traffic_classes[cls],
                 "admin-idle-slope": str(math.ceil(share.idle_slope_bps[cls] * outside))}
                for cls in SR_CLASSES if share.reserved_bps[cls]]
        if rows:
            interfaces.append({"name": name, "type": "iana-if-type:ethernetCsmacd",
                               "ieee802-dot1q-bridge:bridge-port": {
                                   "ieee802-dot1q-cbsa-bridge:cbsa": {"cbsa-parameter-table": rows}}})
    return {"ietf-interfaces:interfaces": {"interface": interfaces}}
