"""A bridge's gPTP (IEEE 802.1AS) state as linuxptp's ``pmc`` reports it, and whether it is synchronised closely
enough to run a gate schedule. Pure: the reading is passed in (``southbound.pmc`` makes it).

A bridge is synchronised when a grandmaster is present, its port state follows one (SLAVE; UNCALIBRATED too when
ptp4l runs ``free_running``, as in the lab, where every instance shares one kernel clock) and its offset from the
grandmaster is within the bound (1 µs unless configured).

>>> text = '''
...     8291c6.fffe.57402a-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP
...         master_offset              244
...         gmPresent                  true
...         gmIdentity                 aac034.fffe.130be0
...     8291c6.fffe.57402a-1 seq 1 RESPONSE MANAGEMENT PORT_DATA_SET
...         portIdentity            8291c6.fffe.57402a-1
...         portState               SLAVE
... '''
>>> reading = reading_from_pmc("s2", text)
>>> reading.offset_ns, reading.grandmaster, reading.port_states
(244, 'aac034.fffe.130be0', ('SLAVE',))
>>> judge(reading, 1000)
ClockState(bridge='s2', synced=True, offset_ns=244, grandmaster='aac034.fffe.130be0', reason='')
>>> judge(reading, 200).reason
'offset 244 ns from grandmaster aac034.fffe.130be0, over the 200 ns bound'

The grandmaster itself (its own identity is the grandmaster's; ptp4l says gmPresent false) is the time's source:

>>> text = '''
...     aac034.fffe.130be0-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP
...         master_offset              0
...         gmPresent                  false
...         gmIdentity                 aac034.fffe.130be0
...     aac034.fffe.130be0-1 seq 1 RESPONSE MANAGEMENT PORT_DATA_SET
...         portState               MASTER
... '''
>>> judge(reading_from_pmc("s1", text), 1000).synced
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_BOUND_NS = 1000
FOLLOWING = ("SLAVE", "UNCALIBRATED", "MASTER")  # a follower's ports; the grandmaster's own are MASTER
BLOCK = re.compile(r"^\s*\S+ seq \d+ RESPONSE MANAGEMENT (\S+)\s*$")
FIELD = re.compile(r"^\s+(\w+)\s+(.*?)\s*$")


@dataclass(frozen=True)
class ClockReading:
    """What ``pmc`` said of one bridge's ptp4l (None: not said, or ptp4l did not answer)."""

    bridge: str
    offset_ns: int | None
    gm_present: bool
    grandmaster: str
    port_states: tuple[str, ...]
    error: str = ""


@dataclass(frozen=True)
class ClockState:
    bridge: str
    synced: bool
    offset_ns: int | None
    grandmaster: str
    reason: str  # why not synchronised; empty when it is


def reading_from_pmc(bridge: str, text: str) -> ClockReading:
    """Parse ``pmc``'s answers to GET TIME_STATUS_NP and GET PORT_DATA_SET (one block per answer)."""
    blocks: list[tuple[str, dict[str, str]]] = []
    for line in text.splitlines():
        if (head := BLOCK.match(line)) is not None:
            blocks.append((head.group(1), {}))
        elif blocks and (field := FIELD.match(line)) is not None:
            blocks[-1][1][field.group(1)] = field.group(2)
    status = next((fields for name, fields in blocks if name == "TIME_STATUS_NP"), None)
    own = next((line.split()[0].rsplit("-", 1)[0] for line in text.splitlines() if BLOCK.match(line)), "")
    states = tuple(fields.get("portState", "") for name, fields in blocks if name == "PORT_DATA_SET")
    if status is None:
        return ClockReading(bridge, None, False, "", states, "ptp4l gave no TIME_STATUS_NP")
    try:
        offset = int(float(status.get("master_offset", "")))
    except ValueError:
        return ClockReading(bridge, None, False, "", states, f"master_offset: not a number: "
                                                             f"{status.get('master_offset')!r}")
    grandmaster = status.get("gmIdentity", "")
    if grandmaster and grandmaster == own and "MASTER" in states:  # the grandmaster itself: the time's source
        return ClockReading(bridge, 0, True, grandmaster, states)
    return ClockReading(bridge, offset, status.get("gmPresent") == "true", grandmaster, states)


def judge(reading: ClockReading, bound_ns: int = DEFAULT_BOUND_NS) -> ClockState:
    """Whether ``reading``'s bridge may run a gate schedule, and if not, why (naming the limit)."""
    def refused(reason: str) -> ClockState:
        return ClockState(reading.bridge, False, reading.offset_ns, reading.grandmaster, reason)

    if reading.error:
        return refused(reading.error)
    if not reading.gm_present:
        return refused("no grandmaster (gmPresent false)")
    if not any(state in FOLLOWING for state in reading.port_states):
        return refused(f"no port follows the grandmaster (port states {', '.join(reading.port_states) or 'none'})")
    if reading.offset_ns is None or abs(reading.offset_ns) > bound_ns:
        return refused(f"offset {reading.offset_ns} ns from grandmaster {reading.grandmaster}, over the "
                       f"{bound_ns} ns bound")
    return ClockState(reading.bridge, True, reading.offset_ns, reading.grandmaster, "")


def one_domain(states: dict[str, ClockState]) -> dict[str, ClockState]:
    """``states`` with every synchronised bridge that follows another grandmaster than most synchronised bridges
    do refused, naming both: a split domain's bridges are not on one time, whatever their offsets."""
    masters = [state.grandmaster for state in states.values() if state.synced]
    if len(set(masters)) <= 1:
        return states
    domain = max(sorted(set(masters)), key=masters.count)
    return {bridge: state if not state.synced or state.grandmaster == domain else ClockState(
                bridge, False, state.offset_ns, state.grandmaster,
                f"follows grandmaster {state.grandmaster}, not {domain} which {masters.count(domain)} of "
                f"{len(masters)} bridges follow (the gPTP domain is split)")
            for bridge, state in states.items()}
