"""Gate control lists as Linux taprio commands and as IEEE 802.1Qcw YANG (RFC 7951 JSON), both ways.

Examples
--------
>>> gcl = PortGcl("s1", "h2", "s1-eth2", 1000, 0, [GateEntry(1, 600), GateEntry(2, 400)])
>>> command = to_taprio(gcl)
>>> command.split(" sched-entry ")[1:]
['S 01 600', 'S 02 400 clockid CLOCK_TAI']
>>> parse_taprio(command) == gcl
False
>>> parse_taprio(command).entries == gcl.entries
True
"""

from __future__ import annotations

import math
import shlex
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import U32, GateEntry, PortGcl

TT_PRIORITY = 7  # 802.1Q PCP of time-triggered frames
SCHED = "ieee802-dot1q-sched"


def priority_map(tt_class: int, be_class: int, tt_priority: int = TT_PRIORITY,
                 sr_classes: tuple[int, ...] = ()) -> list[int]:
    """taprio's 16-entry map from skb priority to traffic class: an SR class takes the priority of its number.

    >>> priority_map(1, 0, sr_classes=(3, 2))[:8]
    [0, 0, 2, 3, 0, 0, 0, 1]
    """
    return [tt_class if priority == tt_priority else priority if priority in sr_classes else be_class
            for priority in range(16)]



def u32_entries(entries: list[GateEntry]) -> list[GateEntry]:
    """Split entries longer than taprio's and YANG's 32-bit nanosecond intervals."""
    out = []
    for entry in entries:
        left = entry.duration_ns
        while left > U32:
            out.append(GateEntry(entry.mask, U32))
            left -= U32
        out.append(GateEntry(entry.mask, left))
    return out


def to_taprio(gcl: PortGcl, tt_priority: int = TT_PRIORITY) -> str:
    """A ``tc qdisc replace ... taprio`` command (software mode, CLOCK_TAI) for ``gcl``."""
    classes = max(gcl.tt_class, gcl.be_class, *gcl.sr_classes) + 1
    words = [
        "tc", "qdisc", "replace", "dev", gcl.interface, "parent", "root", "handle", "100", "taprio",
        "num_tc", str(classes),
        "map", *map(str, priority_map(gcl.tt_class, gcl.be_class, tt_priority, gcl.sr_classes)),
        "queues", *(f"1@{tc}" for tc in range(classes)),
        "base-time", str(gcl.base_time_ns),
    ]
    for entry in u32_entries(gcl.entries):
        words += ["sched-entry", "S", f"{entry.mask:02x}", str(entry.duration_ns)]
    words += ["clockid", "CLOCK_TAI"]
    return " ".join(words)


def parse_taprio(command: str) -> PortGcl:
    """Read back a command made by :func:`to_taprio` (node and peer come from the interface name)."""
    words = shlex.split(command)
    try:
        interface = words[words.index("dev") + 1]
        base_time = int(words[words.index("base-time") + 1])
        mapping = [int(w) for w in words[words.index("map") + 1 : words.index("map") + 17]]
        entries = []
        for at, word in enumerate(words):
            if word == "sched-entry":
                entries.append(GateEntry(int(words[at + 2], 16), int(words[at + 3])))
    except (ValueError, IndexError):
        raise ModelError("command", "not a taprio command with dev, map, base-time and sched-entry") from None
    node = interface.rsplit("-eth", 1)[0]
    tt_class = mapping[TT_PRIORITY]
    be_class = mapping[0]
    sr_classes = tuple(sorted({tc for tc in mapping if tc not in (tt_class, be_class)}, reverse=True))
    cycle = sum(entry.duration_ns for entry in entries)
    return PortGcl(node, "", interface, cycle, base_time, entries, tt_class, be_class, sr_classes)


def rational_seconds(nanoseconds: int) -> dict[str, int]:
    """``nanoseconds`` as the rational number of seconds the modules write (a cycle time), in lowest terms;
    ``ModelError`` when the numerator does not fit its 32 bits.

    >>> rational_seconds(4_000_000)
    {'numerator': 1, 'denominator': 250}
    """
    divisor = math.gcd(nanoseconds, 1_000_000_000)
    if nanoseconds // divisor > U32:
        raise ModelError("cycle_ns", f"{nanoseconds} ns does not fit admin-cycle-time's 32-bit numerator")
    return {"numerator": nanoseconds // divisor, "denominator": 1_000_000_000 // divisor}


def ptp_time(nanoseconds: int) -> dict[str, Any]:
    """A TAI time as the modules' ``ptp-time-grouping`` writes it (64-bit seconds as a string, RFC 7951)."""
    return {"seconds": str(nanoseconds // 1_000_000_000), "nanoseconds": nanoseconds % 1_000_000_000}


def to_yang(gcls: list[PortGcl]) -> dict[str, Any]:
    """``ietf-interfaces`` JSON with each port's ``gate-parameter-table`` (802.1Qcw, 2023)."""
    interfaces = []
    for gcl in gcls:
        table = {
            "gate-enabled": True,
            "admin-gate-states": 255,
            "admin-control-list": {
                "gate-control-entry": [
                    {
                        "index": index,
                        "operation-name": f"{SCHED}:set-gate-states",
                        "gate-states-value": entry.mask,
                        "time-interval-value": entry.duration_ns,
                    }
                    for index, entry in enumerate(u32_entries(gcl.entries))
                ]
            },
            "admin-cycle-time": rational_seconds(gcl.cycle_ns),
            "admin-cycle-time-extension": 0,
            "admin-base-time": ptp_time(gcl.base_time_ns),
            "config-change": True,
        }
        interfaces.append(
            {
                "name": gcl.interface,
                "type": "iana-if-type:ethernetCsmacd",
                "ieee802-dot1q-bridge:bridge-port": {"ieee802-dot1q-sched-bridge:gate-parameter-table": table},
            }
        )
    return {"ietf-interfaces:interfaces": {"interface": interfaces}}


def gate_table(gcl: PortGcl) -> dict[str, Any]:
    """One port's ``gate-parameter-table`` as :func:`to_yang` writes it."""
    port = to_yang([gcl])["ietf-interfaces:interfaces"]["interface"][0]["ieee802-dot1q-bridge:bridge-port"]
    table: dict[str, Any] = port["ieee802-dot1q-sched-bridge:gate-parameter-table"]
    return table


def idle_table(cycle_ns: int = 1_000_000) -> dict[str, Any]:
    """A port's ``gate-parameter-table`` with its gates disabled: every queue open, one entry over one cycle
    (a bridge starts with it, and a port that keeps no list gets it)."""
    return {**gate_table(PortGcl("", "", "", cycle_ns, 0, [GateEntry(255, cycle_ns)])), "gate-enabled": False}


def parse_yang(document: dict[str, Any], tt_class: int = 1, be_class: int = 0) -> list[PortGcl]:
    """Read back :func:`to_yang` output; errors name the missing node."""
    gcls = []
    try:
        for interface in document["ietf-interfaces:interfaces"]["interface"]:
            table = interface["ieee802-dot1q-bridge:bridge-port"]["ieee802-dot1q-sched-bridge:gate-parameter-table"]
            cycle = table["admin-cycle-time"]
            base = table["admin-base-time"]
            entries = [
                GateEntry(int(e["gate-states-value"]), int(e["time-interval-value"]))
                for e in sorted(table["admin-control-list"]["gate-control-entry"], key=lambda e: e["index"])
            ]
            name = interface["name"]
            gcls.append(
                PortGcl(
                    name.rsplit("-eth", 1)[0], "", name,
                    int(cycle["numerator"]) * 1_000_000_000 // int(cycle["denominator"]),
                    int(base["seconds"]) * 1_000_000_000 + int(base["nanoseconds"]),
                    entries, tt_class, be_class,
                )
            )
    except (KeyError, TypeError, ValueError) as missing:
        raise ModelError("yang", f"missing or malformed node {missing}") from None
    return gcls
