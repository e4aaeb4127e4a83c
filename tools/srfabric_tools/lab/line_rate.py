"""A line rate for gated veth ports in the kernel lab: a token bucket under taprio's time-triggered class.

A veth has no line rate, so without one a frame queued ahead costs only its processing, never its serialisation.
Grafting the bucket resets the port's taprio, which on Linux 6.1 stops its gate list where it stood (the timer
that steps it is cancelled; ``srfabric.tsn.gates.shaping`` says more), so each port's running list is sent again
after its bucket.
"""

from __future__ import annotations

import re
import subprocess

from srfabric.errors import ModelError
from srfabric.southbound.taprio import parse_taprio_show
from srfabric.tsn.gates.gcl import TT_CLASS, PortGcl
from srfabric.tsn.gates.render import to_taprio


def emulate_line_rate(ports: list[str], mbit: int) -> None:
    """Give the time-triggered class of each taprio port a token bucket at ``mbit``. The gates open the classes
    at different times, so a bucket per class drains the port at about the line rate. Ports that have their bucket
    keep it (grafting resets a port's queues); those that get one have their gate list sent again."""
    shown = _tc(["qdisc", "show"])
    done = set(re.findall(rf"qdisc tbf {TT_CLASS + 1}0: dev (\S+) parent 100:{TT_CLASS + 1}", shown))
    new = sorted(set(ports) - done)
    lines = [f"qdisc replace dev {port} parent 100:{TT_CLASS + 1} handle {TT_CLASS + 1}0: tbf rate {mbit}mbit "
             "burst 1600 latency 50ms" for port in new]
    lines += [to_taprio(running).removeprefix("tc ") for running in map(running_list, new) if running]
    if lines:
        done_run = subprocess.run(["tc", "-force", "-batch", "-"], input="\n".join(lines) + "\n",
                                  capture_output=True, text=True, check=False)
        if done_run.returncode:
            raise ModelError("line rate", f"tc refused a token bucket: {done_run.stderr.strip()[:300]}")


def running_list(port: str) -> PortGcl | None:
    """The list ``port``'s taprio runs next: the waiting (admin) one if any, else the running one."""
    shown = parse_taprio_show(_tc(["-j", "qdisc", "show", "dev", port, "root"]))
    base, entries = shown.get("admin") or shown.get("oper") or (0, [])
    if not entries:
        return None
    return PortGcl(port, "", port, sum(entry.duration_ns for entry in entries), base, entries)


def _tc(args: list[str]) -> str:
    return subprocess.run(["tc", *args], capture_output=True, text=True, check=False).stdout
