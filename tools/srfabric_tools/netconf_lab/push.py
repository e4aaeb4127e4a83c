"""``python -m srfabric_tools.netconf_lab.push``: one port's gate list (priority 7 open for ``--open-ns`` of each
cycle, best effort after; or no list, ``--release``) pushed to its bridge over NETCONF, committed and confirmed, at
the next cycle boundary ``--lead-ms`` ahead; waits for the base time and reads the bridge's oper state back.
Prints one JSON line: the base time, the push's time and the ports not running the list. For experiments with no
controller (Fig. 9), run in the controller's namespace so that the gates cross the same path."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from srfabric.model.management import read_bridges_file
from srfabric.southbound.gates import next_base_time, tai_now_ns
from srfabric.southbound.netconf.gates import NetconfGates
from srfabric.tsn.gates.gcl import BE_CLASS, TT_CLASS, GateEntry, PortGcl


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="push")
    parser.add_argument("--bridges", type=Path, required=True)
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--port", required=True)
    parser.add_argument("--open-ns", type=int, default=0)
    parser.add_argument("--cycle-ns", type=int, default=1_000_000)
    parser.add_argument("--lead-ms", type=float, default=1500.0)
    parser.add_argument("--release", action="store_true")
    args = parser.parse_args(argv)
    gates = NetconfGates(read_bridges_file(args.bridges), confirm_timeout_s=120)
    gates.capabilities()  # the session open (SSH on an emulated CPU takes seconds) before the base time is taken
    base = next_base_time(tai_now_ns(), args.cycle_ns, int(args.lead_ms * 1e6))
    gcls = [] if args.release else [PortGcl(args.bridge, "", args.port, args.cycle_ns, base, [
        GateEntry(1 << TT_CLASS, args.open_ns), GateEntry(1 << BE_CLASS, args.cycle_ns - args.open_ns)])]
    started = time.perf_counter()
    gates.sent = {args.bridge: []}
    if args.release:  # what the bridge holds is released whatever srfabric last sent it
        gates.sent[args.bridge] = [PortGcl(args.bridge, "", args.port, args.cycle_ns, 0, [])]
    gates.apply(gcls)
    push_ms = (time.perf_counter() - started) * 1e3
    late = tai_now_ns() > base  # the push took longer than the lead: the bridge switched at a later boundary
    time.sleep(max(0.0, (base + args.cycle_ns - tai_now_ns()) / 1e9) + 0.05)
    problems = gates.switched(gcls)
    for _ in range(50):  # the bridge's agent reads each commit within its poll interval
        if not problems:
            break
        time.sleep(0.1)
        problems = gates.switched(gcls)
    print(json.dumps({"base_time_ns": base, "push_ms": round(push_ms, 2), "late": late, "not_switched": problems}))
    gates.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
