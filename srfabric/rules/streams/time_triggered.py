"""The time-triggered traffic class on every hop, with transit switches still path-independent.

Linux picks a frame's taprio traffic class from its skb priority, and a veth
hop resets that, so every switch must choose the queue again. A stream's
frames carry a mark that no hop rewrites (``CodecRules.marker``: the pushed
VLAN tag's priority for ``mac-vlan-mpls``, the IPv4 DSCP for ``mac-nibble``),
and every switch has a twin of each fixed decode entry that also matches the
mark and sets the queue first. That is 11 (10) more entries per switch for
each marked class (below), the same on every switch whatever the streams.
Hosts cannot forge the mark: a ``mac-vlan-mpls`` host frame with a tag is dropped as forged, and a
``mac-nibble`` host frame with DSCP 56 has it cleared on the way in.

Every other frame is put in the best-effort queue at every switch (the
port-in entries set it first): a frame keeps the skb priority its sender's
socket gave it across a veth, so without that a host could claim priority 7.

With Open vSwitch's Linux datapath, ``set_queue:N`` gives skb priority
``1:(N+1)``, and taprio looks at its low four bits: queue 6 is priority 7,
queue 0 priority 1 (best effort).

Streams of SR classes A and B (802.1Qav) are marked and queued the same way,
each class with its own mark (``CodecRules.marker(3)``, ``marker(2)``: the
tag's priority, or DSCP CS3 and CS2) and queue (2 and 1: skb priorities 3 and
2, which the gates' ``prio`` ranks and shapes under best effort's traffic class:
``tsn.gates.shaping``). So every switch has three twins of each decode entry; a
host frame with DSCP CS3 or CS2 has it cleared on the way in under
``mac-nibble``, as the boundary of a DiffServ domain re-marks what it does not
admit.
"""

from __future__ import annotations

from srfabric.model.stream import SR_CLASS_PRIORITY
from srfabric.rules.codec_rules import TT_PCP, CodecRules
from srfabric.rules.entries import Action, FlowEntry, Kind, Output, SetField, SetQueue, cookie, extended, match
from srfabric.rules.pipeline import DECODE, HOST_IN, PORT_IN, PRIO_DECODE, PRIO_EXHAUSTED, PRIO_MISS, TERMINATE

TT_QUEUE = 6  # OVS Linux datapath: skb priority 1:7, taprio's priority 7
CLASS_QUEUE = {priority: priority - 1 for priority in SR_CLASS_PRIORITY.values()}  # A: 2, B: 1 (priorities 3, 2)
BE_QUEUE = 0  # skb priority 1:1: best effort in every taprio map srfabric renders
MAX_QUEUE = 0xEFFF  # OpenFlow queue ids above it are reserved by Open vSwitch


def marked_twins(rules: CodecRules, marker: dict[str, int | tuple[int, int]], sre: bool, queue: int
                 ) -> list[FlowEntry]:
    """Twins of the decode entries (and, on an SRE, of exhausted) that also match ``marker`` and choose ``queue``
    first."""
    entries = []
    for step_match, actions in rules.decode_steps():
        twin = extended(step_match, **marker)
        entries.append(FlowEntry(DECODE, PRIO_DECODE + 1, twin, (SetQueue(queue), *actions),
                                 cookie=cookie(Kind.DECODE)))
    if sre:
        exhausted, strip = rules.exhausted()
        twin = extended(exhausted, **marker)
        entries.append(FlowEntry(DECODE, PRIO_EXHAUSTED + 1, twin, (SetQueue(queue), *strip), goto=TERMINATE,
                                 cookie=cookie(Kind.DECODE)))
    return entries


def marked_queues(tt_queue: int) -> dict[int, int]:
    """Each marked priority's queue: time-triggered frames' (``tt_queue``), then SR classes A's and B's."""
    return {TT_PCP: tt_queue, **CLASS_QUEUE}


def tt_base_entries(rules: CodecRules, sre: bool, queue: int) -> list[FlowEntry]:
    """A switch's fixed entries of the marked classes (time-triggered on ``queue``, SR classes A and B on
    theirs): marked twins of decode (and, on an SRE, of exhausted)."""
    entries = []
    for priority, its_queue in marked_queues(queue).items():
        marker = rules.marker(priority)
        entries += marked_twins(rules, marker, sre, its_queue)
        if "ip_dscp" in marker:
            # Below every trusted port's entry: only frames from hosts (and unknown ports) are cleared.
            scrub = match(eth_type=0x0800, ip_dscp=marker["ip_dscp"])
            entries.append(FlowEntry(PORT_IN, PRIO_MISS + 1, scrub, (SetField("ip_dscp", 0),), goto=HOST_IN,
                                     cookie=cookie(Kind.SECURITY)))
    return entries


def best_effort_first(entries: list[FlowEntry]) -> list[FlowEntry]:
    """``entries`` with every port-in entry that passes a frame on setting the best-effort queue first."""
    return [FlowEntry(e.table, e.priority, e.match, (SetQueue(BE_QUEUE), *e.actions), e.goto, e.cookie)
            if e.table == PORT_IN and e.goto is not None else e for e in entries]


def queued(actions: tuple[Action, ...], queue: int) -> tuple[Action, ...]:
    """``actions`` with ``set_queue`` before the first output."""
    at = next((i for i, a in enumerate(actions) if isinstance(a, Output)), len(actions))
    return (*actions[:at], SetQueue(queue), *actions[at:])
