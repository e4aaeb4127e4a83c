"""The time-triggered traffic class on every hop, with transit switches still path-independent.

Linux picks a frame's taprio traffic class from its skb priority, and a veth
hop resets that, so every switch must choose the queue again. A stream's
frames carry a mark that no hop rewrites (``CodecRules.tt_marker``: the pushed
VLAN tag's priority for ``mac-vlan-mpls``, the IPv4 DSCP for ``mac-nibble``),
and every switch has a twin of each fixed decode entry that also matches the
mark and sets the queue first. That is 11 (10) more entries per switch, the
same on every switch whatever the streams. Hosts cannot forge the mark: a
``mac-vlan-mpls`` host frame with a tag is dropped as forged, and a
``mac-nibble`` host frame with DSCP 56 has it cleared on the way in.

Every other frame is put in the best-effort queue at every switch (the
port-in entries set it first): a frame keeps the skb priority its sender's
socket gave it across a veth, so without that a host could claim priority 7.

With Open vSwitch's Linux datapath, ``set_queue:N`` gives skb priority
``1:(N+1)``, and taprio looks at its low four bits: queue 6 is priority 7,
queue 0 priority 1 (best effort).
"""

from __future__ import annotations

from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import Action, FlowEntry, Kind, Output, SetField, SetQueue, cookie, extended, match
from srfabric.rules.pipeline import DECODE, HOST_IN, PORT_IN, PRIO_DECODE, PRIO_EXHAUSTED, PRIO_MISS, TERMINATE

TT_QUEUE = 6  # OVS Linux datapath: skb priority 1:7, taprio's priority 7
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


def tt_base_entries(rules: CodecRules, sre: bool, queue: int) -> list[FlowEntry]:
    """A switch's fixed time-triggered entries: marked twins of decode (and, on an SRE, of exhausted)."""
    marker = rules.tt_marker()
    entries = marked_twins(rules, marker, sre, queue)
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
