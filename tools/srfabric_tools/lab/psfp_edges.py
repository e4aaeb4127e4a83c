"""The talkers' ports of a lab fabric policed four ways for ``tsn-protect``: srfabric's XDP policing program in
front of Open vSwitch (``srfabric.xdp.psfp_port``), Linux's ``tc`` filters with ``gate`` and ``police``
(``srfabric.tsn.protect.tc``), Open vSwitch's own OpenFlow meters (``srfabric serve --psfp-meters``: the meter
only, no gate), or not at all; each way, the frames dropped at each port are counted (the meters' as the API's
PSFP document reports them)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from srfabric.tsn.protect.psfp import StreamProtection
from srfabric.tsn.protect.tc import tc_commands
from srfabric.xdp.psfp_port import PsfpPort

EDGES = ("xdp", "tc", "meters", "none")


class PolicedPorts:
    """``ports`` policed by ``edge`` with ``plans`` (each plan's talker is the port its frames come in by)."""

    def __init__(self, edge: str, ports: Sequence[str], document: Callable[[], dict[str, Any]] | None = None) -> None:
        if edge not in EDGES:
            raise ValueError(f"edge {edge!r} is not one of {', '.join(EDGES)}")
        self.edge, self.ports, self.document = edge, list(ports), document  # the edge's PSFP document, read anew
        self.xdp: dict[str, PsfpPort] = {}
        self.handles: dict[str, set[int]] = {}  # each port's streams (the meters' ids)
        # A clsact grafted on a port stops that port's taprio (``srfabric.tsn.gates.shaping``): before any gate.
        run_tc([f"qdisc add dev {port} clsact" for port in self.ports])

    def protect(self, plans: Sequence[StreamProtection]) -> None:
        """The plans onto the ports. The XDP program goes onto every port whatever the edge (with an empty table
        but for XDP's), so that frames reach the switch the same way in every run."""
        mine = {port: [plan for plan in plans if plan.talker == port] for port in self.ports}
        self.handles = {port: {plan.handle for plan in held} for port, held in mine.items()}
        if self.edge == "tc":
            run_tc([line.removeprefix("tc ") for port, held in mine.items() for line in tc_commands(held, port)
                    if " filter " in line])
        for port, held in mine.items():
            self.xdp[port] = PsfpPort.attach(port)
            self.xdp[port].converge(held if self.edge == "xdp" else [])

    def dropped(self, port: str) -> int:
        """Frames the policing of ``port`` dropped (over their size or rate, or outside their window)."""
        if self.edge == "xdp":
            return self.xdp[port].outcomes()["dropped"]
        if self.edge == "tc":
            return sum(dropped_in(ingress_filters(port)))
        if self.edge == "meters":
            return sum(counts["red-frames-count"] for handle, counts in self.meter_counters().items()
                       if handle in self.handles.get(port, ()))
        return 0

    def meter_counters(self) -> dict[int, dict[str, int]]:
        """Each stream filter's counters by handle, as the API's document shows the meters' last report."""
        if self.document is None:
            return {}
        component = self.document()["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
        table = component.get("ieee802-dot1q-psfp-bridge:stream-filters", {}).get("stream-filter-instance-table", [])
        return {row["stream-handle"]: {k: v for k, v in row.items() if k.endswith("-count")} for row in table}

    def counters(self) -> dict[str, object]:
        """What each port's policing counted, as it shows it."""
        if self.edge == "xdp":
            return {port: held.counters() for port, held in self.xdp.items()}
        if self.edge == "meters":
            return {str(handle): counts for handle, counts in self.meter_counters().items()}
        return {port: ingress_filters(port) for port in self.ports}

    def close(self) -> None:
        for held in self.xdp.values():
            held.detach()
        self.xdp.clear()


def ingress_filters(port: str) -> str:
    """``port``'s ingress filters with their actions' counters, as ``tc -s`` prints them."""
    return subprocess.run(["tc", "-s", "filter", "show", "dev", port, "ingress"], capture_output=True, text=True,
                          check=False).stdout


def dropped_in(shown: str) -> list[int]:
    """The frames each action in ``tc -s filter show`` dropped (iproute2 6.1's JSON for these is not JSON).

    >>> dropped_in(" Sent 9 bytes 3 pkt (dropped 3, overlimits 0 requeues 0)")
    [3]
    """
    return [int(found) for found in re.findall(r"\(dropped (\d+),", shown)]


def run_tc(lines: list[str]) -> None:
    if not lines:
        return
    done = subprocess.run(["tc", "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise RuntimeError(f"tc refused: {done.stderr.strip()[:400]}")
