"""Gate control lists onto switch ports: Linux taprio through ``tc``, with a common future base time.

A port that already runs taprio gets the new list as its *admin* schedule: the
kernel switches it to *oper* at the base time, at a cycle boundary, so no cycle
runs a mix of the old and new gates. Every port of one change gets the same
base time. The command runner and the TAI clock are passed in.

The adapter protocol and the base time are in :mod:`srfabric.southbound.gates`.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric.tsn.gates.shaping import at_port_rate, port_commands
from srfabric.tsn.gates.switch_over import for_taprio

Runner = Callable[[list[str], str | None], tuple[int, str]]


def run_command(argv: list[str], stdin: str | None = None) -> tuple[int, str]:
    """Run ``argv`` (``stdin`` as its input); its exit code and what it printed (both streams)."""
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, f"{argv[0]}: no answer within 30 s"
    return done.returncode, done.stdout + done.stderr


class TaprioGates:
    """taprio on this network namespace's interfaces (Mininet's switch ports live in the root namespace)."""

    def __init__(self, run: Runner = run_command, net: Path = Path("/sys/class/net")) -> None:
        self.run = run
        self.net = net
        self.ports: dict[str, PortGcl] = {}
        # interface -> its last two lists as taprio got them and as they were asked for (``switch_over``)
        self.given: dict[str, list[tuple[PortGcl, PortGcl]]] = {}

    def ready(self) -> None:
        """Refuse a host without ``tc``; running it once also brings it into memory before the first change
        (under the kernel lab its first start reads it over 9p)."""
        code, output = self.run(["tc", "-V"], None)
        if code:
            raise ModelError("--gates", f"taprio gates need tc (iproute2): {' '.join(output.split())[:200]}")

    def check(self, gcls: Sequence[PortGcl]) -> None:
        """Refuse, naming the port, what cannot run taprio here; changes nothing."""
        for gcl in gcls:
            where = f"port {gcl.interface}"
            if not (self.net / gcl.interface).exists():
                raise ModelError(where, "no such interface on the switches' host")
            queues = len(list((self.net / gcl.interface / "queues").glob("tx-*")))
            needed = max(gcl.tt_class, gcl.be_class) + 1
            if queues < needed:
                raise ModelError(where, f"has {queues} transmit queue(s); taprio needs {needed} "
                                        "(make the interface with numtxqueues 8)")

    def apply(self, gcls: Sequence[PortGcl]) -> None:
        """Install every list (all with the base time they carry) and free the ports that lost their streams,
        in one ``tc -batch`` (one process, however many ports); a port already running the very list (base time
        too) is left alone. A port tc refuses is named; the others of the batch are in place, and remembered, so
        that the next apply frees or replaces them."""
        self.check(gcls)
        gone = sorted(set(self.ports) - {gcl.interface for gcl in gcls})
        running: list[PortGcl] = []
        changed: list[PortGcl] = []
        for gcl in gcls:
            (running if self.ports.get(gcl.interface) == gcl else changed).append(gcl)
        gcls = changed
        taken = [for_taprio(self.ports.get(gcl.interface), gcl) for gcl in gcls]
        for gcl, given in zip(gcls, taken, strict=True):  # so that ``read`` shows oper and admin as asked for
            self.given[gcl.interface] = [*self.given.get(gcl.interface, [])[-1:], (given, gcl)]
        lines: list[str] = []
        owner: list[int] = []  # the index in ``gcls`` of each line's port
        for at, given in enumerate(taken):
            before = self.ports.get(given.interface)
            commands = port_commands(self.at_speed(given), shaped_before=before is not None and bool(before.shapers))
            lines += [command.removeprefix("tc ") for command in commands]
            owner += [at] * len(commands)
        lines += [f"qdisc del dev {p} root" for p in gone]
        if not lines:
            return
        code, output = self.run(["tc", "-force", "-batch", "-"], "\n".join(lines) + "\n")
        failed = {owner[int(n) - 1] for n in re.findall(r"Command failed -:(\d+)", output)
                  if int(n) - 1 < len(owner)} if code else set()
        refused = [gcl for at, gcl in enumerate(gcls) if at in failed]
        self.ports = {**self.ports, **{gcl.interface: gcl for at, gcl in enumerate(gcls) if at not in failed}}
        for port in gone:  # freed, or vanished with its link (a failed delete leaves nothing to free either)
            self.ports.pop(port, None)
        if refused:
            raise ModelError(f"port {refused[0].interface}", _taprio_refusal(output))
        if code and not failed:
            raise ModelError("tc", f"tc -batch failed: {' '.join(output.split())[:300]}")
        self.ports = {gcl.interface: gcl for gcl in [*running, *gcls]}

    def at_speed(self, gcl: PortGcl) -> PortGcl:
        """``gcl`` with its class shapers' send slopes at the speed the kernel gives the interface, where it says
        one (``shaping.at_port_rate``)."""
        if not gcl.shapers:  # most ports: no file to read on every change
            return gcl
        try:
            mbit = int((self.net / gcl.interface / "speed").read_text())
        except (OSError, ValueError):
            return gcl
        return at_port_rate(gcl, mbit * 1000) if mbit > 0 else gcl

    def read(self, interface: str) -> dict[str, Any]:
        """What the kernel runs on ``interface``: ``oper`` and (while a change waits) ``admin`` schedules."""
        code, output = self.run(["tc", "-j", "qdisc", "show", "dev", interface, "root"], None)
        if code:
            raise ModelError(f"port {interface}", output.strip())
        shown = parse_taprio_show(output)
        for kind, (base, entries) in shown.items():  # a list started where it met the old one: as it was asked for
            for given, asked in self.given.get(interface, []):
                if (given.base_time_ns, given.entries) == (base, entries):
                    shown[kind] = (asked.base_time_ns, asked.entries)
        return shown


def _taprio_refusal(output: str) -> str:
    text = " ".join(output.split())
    if "Specified qdisc kind is unknown" in text or "Unknown qdisc" in text:
        return "this kernel has no taprio (sch_taprio); run on a kernel with it, or in srfabric kernel-lab"
    return f"taprio refused the schedule: {text}"


def parse_taprio_show(output: str) -> dict[str, Any]:
    """``tc -j qdisc show`` of a taprio root as {"oper": (base time, entries), "admin": ...}.

    >>> show = '[{"kind":"taprio","options":{"base_time":5,"cycle_time":9,"schedule":[{"index":0,"cmd":"S",'
    >>> show += '"gatemask":"0x2","interval":9}],"admin":{"base_time":18,"schedule":[]}}}]'
    >>> parse_taprio_show(show)
    {'oper': (5, [GateEntry(mask=2, duration_ns=9)]), 'admin': (18, [])}
    >>> parse_taprio_show(show.replace('"admin":', ''))["admin"]  # as iproute2 6.1 prints it
    (18, [])
    >>> parse_taprio_show('[{"kind":"taprio","options":{"tc":2,{"base_time":7,"schedule":[]}}}]')
    {'admin': (7, [])}
    """
    try:
        qdiscs = json.loads(output or "[]")
    except json.JSONDecodeError:
        # iproute2 6.1 prints the admin schedule as an object without its key (after the oper schedule, or
        # alone while none runs yet); no array element of this output starts with "base_time".
        try:
            qdiscs = json.loads(output.replace(',{"base_time"', ',"admin":{"base_time"'))
        except json.JSONDecodeError:
            raise ModelError("tc", f"unreadable JSON from tc: {output[:2000]!r}") from None
    taprio = next((q for q in qdiscs if q.get("kind") == "taprio"), None)
    if taprio is None:
        return {}
    options = taprio.get("options", {})
    shown: dict[str, Any] = {}
    for name, part in (("oper", options), ("admin", options.get("admin"))):
        if part and "schedule" in part:
            entries = [GateEntry(int(str(e["gatemask"]), 0), int(e["interval"])) for e in part["schedule"]]
            shown[name] = (int(part.get("base_time", 0)), entries)
    return shown
