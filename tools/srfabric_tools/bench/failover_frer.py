"""``srfabric bench failover --frer``: link cuts under a redundant stream (IEEE 802.1CB, two seamless trees),
beside a stream that is not redundant, in one run.

The TSN paper's Fig. 1 fabric runs in Mininet on Open vSwitch under ``srfabric serve``. Through the API, h1 -> h3
is made redundant (``num_seamless_trees: 2``: s1-s2-s5 and s1-s3-s4-s5); h2 -> h3 is an ordinary pinned stream
(s1-s2-s5). Each talker sends numbered UDP at 1,000 frames/s for 3 s, h1 with R-TAGs, and h3's interface
eliminates duplicates in XDP (``bpf/frer_eliminate.c``). One second in, a link is cut (both ends down); after the
run it comes back and the next cut takes the next link, round-robin over all five. Per cut and stream: frames
lost, frames delivered twice, and the longest gap between two frames received (less the 1 ms period).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.model.topo import tsn_fig1
from srfabric.tsn.model.frer import COUNTERS
from srfabric.xdp.frer import FrerEliminator
from srfabric.xdp.loader import build
from srfabric_tools.bench.output import machine, provenance, run_folder, write_csv, write_json
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.frer_traffic import NumberedUdp, tally

RATE, SECONDS, CUT_AT_S = 1000, 3.0, 1.0
FRAME_BYTES = 96 + 6  # the UDP frame and its R-TAG


def make_streams(lab: ApiLab) -> tuple[dict[str, Any], dict[str, Any]]:
    with lab.serve.client() as client:
        redundant = client.create("streams", {"name": "redundant", "talker": lab.ports["h1"],
                                              "listener": lab.ports["h3"], "priority": 5, "udp_source_port": 6001,
                                              "udp_destination_port": 6000, "num_seamless_trees": 2})
        single = client.create("streams", {"name": "single", "talker": lab.ports["h2"], "listener": lab.ports["h3"],
                                           "priority": 5, "udp_source_port": 6101, "udp_destination_port": 6100})
    return redundant, single


def wait_links(lab: ApiLab, timeout: float = 30.0) -> None:
    """Until the controller knows every link both ways again."""
    deadline = time.monotonic() + timeout
    with lab.serve.client() as client:
        while len(client.get("/v2.0/srfabric/fabric")["fabric"]["links"]) < 2 * len(lab.spec.links):
            if time.monotonic() > deadline:
                raise SrfabricError("links", f"the cut link was not back within {timeout} s")
            time.sleep(0.2)
    time.sleep(1.0)  # the streams' entries and groups are whole again


def cut_once(lab: ApiLab, number: int, link: tuple[str, str], paths: dict[str, list[str]]) -> dict[str, Any]:
    count = int(RATE * SECONDS)
    flows = {"redundant": NumberedUdp(lab, f"redundant{number}", "h1", "h3", 6000, count, RATE, tagged=True),
             "single": NumberedUdp(lab, f"single{number}", "h2", "h3", 6100, count, RATE, tagged=False)}
    for flow in flows.values():
        flow.listen()
    for flow in flows.values():
        flow.talk()
    time.sleep(CUT_AT_S)
    assert lab.testbed is not None
    lab.testbed.net.configLinkStatus(*link, "down")
    try:
        results = {name: tally(flow.received(SECONDS + 30), count, 1_000_000_000 // RATE)
                   for name, flow in flows.items()}
    finally:
        lab.testbed.net.configLinkStatus(*link, "up")
    wait_links(lab)
    crossed = {name: any({link[0], link[1]} == {a, b} for a, b in zip(path, path[1:], strict=False))
               for name, path in paths.items()}
    row: dict[str, Any] = {"cut": number, "link": "-".join(link), "frames": count}
    for name, result in results.items():
        row |= {f"{name}_{key}": value for key, value in result.items()}
    return row | {f"on_{name}": on for name, on in crossed.items()}


def run_frer_cuts(quick: bool, out: str, say: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    measured_on = machine()
    cuts = 2 if quick else 20
    build()
    rows = []
    with tempfile.TemporaryDirectory(prefix="srfabric-frer-") as scratch, \
            ServeProcess(f"sqlite:///{scratch}/api.db") as serve, ApiLab(tsn_fig1(), serve) as lab:
        redundant, single = make_streams(lab)
        paths = {"first_path": redundant["path"], "second_path": redundant["second_path"], "single": single["path"]}
        assert lab.testbed is not None
        listener = lab.testbed.node("h3").pid
        eliminator = FrerEliminator.load(f"bench-frer-{listener}", history_length=32, reset_ms=2000)
        try:
            eliminator.attach("h3-eth0", listener)
            links = [(link.a, link.b) for link in lab.spec.links]
            for number in range(1, cuts + 1):
                row = cut_once(lab, number, links[(number - 1) % len(links)], paths)
                say(f"cut {number} ({row['link']}): redundant lost {row['redundant_lost']}, delivered twice "
                    f"{row['redundant_duplicates']}; single lost {row['single_lost']}, longest gap "
                    f"{row['single_outage_ms']} ms")
                rows.append(row)
            counters = next(iter(eliminator.counters().values()), {})
        finally:
            eliminator.attach("h3-eth0", listener, off=True)
            eliminator.unload()
    summary = summarise(rows, paths, counters, quick)
    summary.update(provenance(measured_on, f"srfabric bench failover --frer{' --quick' if quick else ''}"))
    folder = run_folder(out, "failover-frer")
    write_csv(folder / "cuts.csv", [row | {"commit": measured_on["commit"]} for row in rows])
    write_json(folder / "summary.json", summary)
    return summary, folder


def summarise(rows: list[dict[str, Any]], paths: dict[str, list[str]], counters: dict[str, int], quick: bool
              ) -> dict[str, Any]:
    single_cuts = [r for r in rows if r["on_single"]]
    return {
        "cuts": len(rows), "quick": quick, "frames_per_s": RATE, "seconds_per_cut": SECONDS, "paths": paths,
        "redundant": {"lost": sum(r["redundant_lost"] for r in rows),
                      "delivered_twice": sum(r["redundant_duplicates"] for r in rows),
                      "longest_gap_ms": max(r["redundant_outage_ms"] for r in rows),
                      "eliminator": counters},
        "single": {"cuts_on_its_path": len(single_cuts), "lost": sum(r["single_lost"] for r in single_cuts),
                   "outage_ms_median": statistics.median(r["single_outage_ms"] for r in single_cuts)
                   if single_cuts else None},
        # The second copy crosses the second path's links and the listener's own link, where it is eliminated.
        "replication_cost": {"bits_per_s_per_link": FRAME_BYTES * 8 * RATE,
                             "links": len(paths["second_path"]), "frame_bytes": FRAME_BYTES},
        "goals": {"no_frame_lost": sum(r["redundant_lost"] for r in rows) == 0,
                  "no_frame_twice": sum(r["redundant_duplicates"] for r in rows) == 0},
        "counter_names": sorted(COUNTERS.values()),
    }


def print_frer(summary: dict[str, Any]) -> None:
    redundant, single = summary["redundant"], summary["single"]
    print(f"{summary['cuts']} link cuts at {summary['frames_per_s']} frames/s: the redundant stream lost "
          f"{redundant['lost']} frames and delivered {redundant['delivered_twice']} twice (longest gap "
          f"{redundant['longest_gap_ms']} ms); the single-path stream, over {single['cuts_on_its_path']} cuts of its "
          f"path, lost {single['lost']} (median gap {single['outage_ms_median']} ms). Replication: "
          f"{summary['replication_cost']['bits_per_s_per_link']} bit/s on {summary['replication_cost']['links']} "
          f"more links")
