"""What a port's gate-parameter-table state leaves say, as the files netconfd's SIL serves them from: one file
per leaf, a leaf's value or a container's XML. Pure: the agent writes them.

Examples
--------
>>> from srfabric.tsn.gates.gcl import GateEntry, PortGcl
>>> gcl = PortGcl("s1", "", "s1-eth3", 1_000_000, 5_000_000_000, [GateEntry(2, 400_000), GateEntry(1, 600_000)])
>>> files = running(gcl, changed_ns=5_000_000_000)
>>> files["oper-cycle-time"].split(">", 1)[1]
'<numerator>1</numerator><denominator>1000</denominator></oper-cycle-time>'
>>> files["config-pending"], files["oper-gate-states"]
('false', '255')
>>> pending()["config-pending"]
'true'
"""

from __future__ import annotations

from srfabric.rules.yang.xml_document import to_xml
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.gates.render import gate_table

SB = "ieee802-dot1q-sched-bridge"


def _time(leaf: str, at_ns: int) -> str:
    return to_xml({f"{SB}:{leaf}": {"seconds": at_ns // 1_000_000_000, "nanoseconds": at_ns % 1_000_000_000}})


def running(gcl: PortGcl, changed_ns: int) -> dict[str, str]:
    """The state of a port that switched to ``gcl`` at ``changed_ns`` (TAI): its oper list, cycle and base
    time are the admin ones (as :func:`to_yang` writes them), no change is pending."""
    admin = gate_table(gcl)
    return {
        "oper-gate-states": str(admin["admin-gate-states"]),
        **{f"oper-{leaf}": to_xml({f"{SB}:oper-{leaf}": admin[f"admin-{leaf}"]})
           for leaf in ("control-list", "cycle-time", "base-time")},
        "oper-cycle-time-extension": str(admin["admin-cycle-time-extension"]),
        "config-change-time": _time("config-change-time", changed_ns),
        "config-pending": "false",
    }


def pending() -> dict[str, str]:
    """A change committed whose base time is still ahead."""
    return {"config-pending": "true"}


def stopped() -> dict[str, str | None]:
    """A port whose gates were disabled: no oper list any more (None: the file goes)."""
    return {"oper-control-list": None, "oper-cycle-time": None, "oper-base-time": None,
            "oper-cycle-time-extension": None, "config-pending": "false"}
