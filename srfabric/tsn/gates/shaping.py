"""SR classes A and B beside the gates on Linux: ranked and shaped under taprio's best-effort class.

The classes share best effort's traffic class, so their gate is open wherever best effort's is (as the class
bound counts it) and neither taprio's map nor its gate masks change. Under that class's queue a ``prio``
qdisc serves class A first, then class B, then best effort, and a ``cbs`` under each class's band holds it to its
idle slope. A frame's band comes from the skb priority Open vSwitch's ``set_queue`` gave it at this switch
(queue N is priority 1:(N+1): class A's queue 2, class B's queue 1), through one ``basic`` filter per shaped class;
every other frame falls to best effort's band (the priomap).

The port's ``taprio`` is sent once more after the classes' qdiscs (``port_commands``): grafting a qdisc on an
interface that is up (a child under taprio, or a ``clsact``) resets its taprio, and on the kernel lab's Linux 6.1
that cancels the timer that steps the gate list (it is gone from ``/proc/timer_list``). The gates then stay as they
were at that instant and frames behind a closed gate wait for good; a taprio sent again restarts the timer.

Why not a traffic class of its own per SR class: taprio's software mode serves the lowest-numbered queue first up
to Linux 6.3 and the highest traffic class first from 6.4, so the classes would outrank best effort on one
kernel and not on the other. A ``prio`` child ranks them alike on both.

Examples
--------
>>> from srfabric.tsn.gates.gcl import ClassShaper, GateEntry, PortGcl
>>> gcl = PortGcl("s1", "s2", "s1-eth2", 1000, 0, [GateEntry(1, 1000)],
...               shapers=(ClassShaper(3, 15488, -984512, 500, -1492),))
>>> for line in shaping_commands(gcl):
...     print(line)  # doctest: +NORMALIZE_WHITESPACE
tc qdisc replace dev s1-eth2 parent 100:1 handle 10: prio bands 3 priomap 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2
tc filter replace dev s1-eth2 parent 10: prio 1 handle 1 basic match 'meta(priority eq 65539)' classid 10:1
tc qdisc replace dev s1-eth2 parent 10:1 cbs idleslope 15488 sendslope -984512 hicredit 500 locredit -1492 offload 0
>>> shaping_commands(PortGcl("s1", "s2", "s1-eth2", 1000, 0, [GateEntry(1, 1000)]))
['tc qdisc replace dev s1-eth2 parent 100:1 pfifo']
>>> [line.split(" parent ")[1].split()[0] for line in port_commands(gcl, shaped_before=False)]
['root', '100:1', '10:', '10:1', 'root']
"""

from __future__ import annotations

from dataclasses import replace

from srfabric.model.stream import SR_CLASS_PRIORITY
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.gates.render import to_taprio

HANDLE = "10:"
BAND = {priority: band for band, priority in enumerate(sorted(SR_CLASS_PRIORITY.values(), reverse=True), start=1)}
BEST_EFFORT_BAND = len(BAND)  # the priomap's band (counted from 0): after every class's


def skb_priority(priority: int) -> int:
    """The skb priority of a class's frames after Open vSwitch's ``set_queue`` (its queue ``priority - 1``)."""
    return (1 << 16) | priority


def shaping_commands(gcl: PortGcl) -> list[str]:
    """The Linux commands that rank and shape ``gcl``'s SR classes under its taprio (whose handle is 100:, traffic
    class c holding queue c, taprio's class 100:c+1); without shapers, the queue's default child back."""
    parent = f"100:{gcl.be_class + 1}"
    dev = gcl.interface
    if not gcl.shapers:
        return [f"tc qdisc replace dev {dev} parent {parent} pfifo"]
    priomap = " ".join([str(BEST_EFFORT_BAND)] * 16)
    lines = [f"tc qdisc replace dev {dev} parent {parent} handle {HANDLE} prio bands {len(BAND) + 1} priomap {priomap}"]
    for shaper in sorted(gcl.shapers, key=lambda s: BAND[s.priority]):
        band = BAND[shaper.priority]
        lines += [f"tc filter replace dev {dev} parent {HANDLE} prio {band} handle {band} basic match "
                  f"'meta(priority eq {skb_priority(shaper.priority)})' classid {HANDLE}{band}",
                  f"tc qdisc replace dev {dev} parent {HANDLE}{band} cbs idleslope {shaper.idle_kbit} sendslope "
                  f"{shaper.send_kbit} hicredit {shaper.hi_bytes} locredit {shaper.lo_bytes} offload 0"]
    return lines


def at_port_rate(gcl: PortGcl, port_kbit: int) -> PortGcl:
    """``gcl`` with each class's send slope taken against ``port_kbit``, the speed Linux counts the port at: its
    software ``cbs`` spends a frame's credit at the device's speed (a veth says 10 Gb/s whatever the model's link
    rate), so only a send slope of the idle slope less that speed holds the class to its idle slope.

    >>> from srfabric.tsn.gates.gcl import ClassShaper, GateEntry
    >>> gcl = PortGcl("s1", "s2", "s1-eth2", 1000, 0, [GateEntry(1, 1000)],
    ...               shapers=(ClassShaper(3, 15488, -984512, 500, -1492),))
    >>> at_port_rate(gcl, 10_000_000).shapers[0].send_kbit
    -9984512
    """
    return replace(gcl, shapers=tuple(replace(shaper, send_kbit=shaper.idle_kbit - port_kbit)
                                      for shaper in gcl.shapers))


def port_commands(gcl: PortGcl, shaped_before: bool) -> list[str]:
    """``gcl``'s taprio; with SR classes now or before, their qdiscs (or the default child back) and the taprio
    again, whose timer the grafts cancelled (see the module's text)."""
    taprio = to_taprio(gcl)
    if not gcl.shapers and not shaped_before:
        return [taprio]
    return [taprio, *shaping_commands(gcl), taprio]
