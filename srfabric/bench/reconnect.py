"""``srfabric bench reconnect``: how soon a fabric is back under a restarted controller, over TLS.

A k=4 fat-tree (20 Open vSwitch bridges in Mininet) connects to ``srfabric serve --openflow-tls`` with a
certificate naming the 20 datapath ids. ``restarts`` times, the controller is stopped (SIGTERM) and started
again on the same ports and database, until its API reports all 20 switches taken (TLS handshake, OpenFlow
handshake, identity check, role, read-back). Three times are kept: from the stop, from the new process's start,
and from when it says it is ready (its API up; it takes switches in from about 0.5 s after its start, so some
may be taken before it is ready). Each
bridge's controller record has ``max_backoff=1000`` (Open vSwitch's least, in ms; its default of 8 s is how long
a bridge may wait between attempts). Then the tables are compared with those held before the restart, and
the entries younger than the restart (sent again) are counted.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.bench.output import machine, provenance, run_folder, write_csv, write_json
from srfabric.bench.takeover import entries_younger_than, wait_connected
from srfabric.model.topo import fat_tree
from srfabric.security.pki import make_ca, make_certificate
from srfabric.testbed.api_lab import ApiLab, ServeProcess

GOAL_S = 1.0
MAX_BACKOFF_MS = 1000


def fast_reconnect(bridges: list[str]) -> None:
    """Every controller record of ``bridges`` retries at least once a second (``max_backoff``)."""
    for bridge in bridges:
        records = subprocess.run(["ovs-vsctl", "--timeout=10", "get", "bridge", bridge, "controller"],
                                 capture_output=True, text=True, check=True).stdout.strip(" []\n")
        for record in filter(None, (r.strip() for r in records.split(","))):
            subprocess.run(["ovs-vsctl", "--timeout=10", "set", "controller", record,
                            f"max_backoff={MAX_BACKOFF_MS}"], check=True, capture_output=True)


def restart_once(lab: ApiLab, number: int, before: dict[str, list[str]]) -> dict[str, Any]:
    serve, switches = lab.serve, len(lab.spec.switches)
    stopped = time.monotonic()
    serve.stop()
    serve.start()
    listening = time.monotonic()
    taken = wait_connected(serve, switches, poll=0.01)
    time.sleep(1.0)  # a sync that would change anything has run by now
    return {"restart": number, "down_s": round(listening - stopped, 4), "reconnect_s": round(taken - listening, 4),
            "from_start_s": round(taken - serve.spawned_at, 4), "from_stop_s": round(taken - stopped, 4),
            "tables_as_before": lab.dump_flows() == before,
            "entries_sent_again": entries_younger_than(lab, time.monotonic() - stopped)}


class SwitchesOnly(ApiLab):
    """The fabric and its discovery, without hosts learned or functions started (nothing here needs them)."""

    def start(self) -> None:
        from srfabric.testbed.net import Testbed

        self.testbed = Testbed(self.spec, self.serve.openflow_port, tls=self.serve.tls)
        self.testbed.start()
        with self.serve.client() as client:
            self.wait_for_discovery(client)


def run_reconnect(quick: bool, out: str, say: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    measured_on = machine()
    restarts = 3 if quick else 20
    spec = fat_tree(4)
    rows = []
    with tempfile.TemporaryDirectory(prefix="srfabric-reconnect-") as scratch:
        pki = Path(scratch) / "pki"
        make_certificate(pki, make_ca(pki), "controller")
        with ServeProcess(f"sqlite:///{scratch}/api.db", tls=pki, activation=True) as serve, \
                SwitchesOnly(spec, serve) as lab:
            fast_reconnect(list(spec.switches))
            time.sleep(1.0)
            before = lab.dump_flows()
            for number in range(1, restarts + 1):
                row = restart_once(lab, number, before)
                say(f"restart {number}: {len(spec.switches)} switches taken {row['reconnect_s'] * 1000:.0f} ms after "
                    f"the controller was ready, {row['from_start_s'] * 1000:.0f} ms after it started (down "
                    f"{row['down_s']:.2f} s); tables as before: "
                    f"{row['tables_as_before']}, entries sent again: {row['entries_sent_again']}")
                rows.append(row)
    summary = summarise(rows, len(spec.switches), quick)
    summary.update(provenance(measured_on, f"srfabric bench reconnect{' --quick' if quick else ''}"))
    folder = run_folder(out, "reconnect")
    write_csv(folder / "restarts.csv", [row | {"commit": measured_on["commit"]} for row in rows])
    write_json(folder / "summary.json", summary)
    plot(rows, summary, folder / "reconnect.png")
    return summary, folder


def summarise(rows: list[dict[str, Any]], switches: int, quick: bool) -> dict[str, Any]:
    times = sorted(r["reconnect_s"] for r in rows)
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    return {"switches": switches, "restarts": len(rows), "quick": quick, "tls": True,
            "ovs_max_backoff_ms": MAX_BACKOFF_MS,
            "reconnect_s_median": round(statistics.median(times), 4), "reconnect_s_p99": p99,
            "reconnect_s_max": times[-1], "down_s_median": round(statistics.median(r["down_s"] for r in rows), 4),
            "from_start_s_median": round(statistics.median(r["from_start_s"] for r in rows), 4),
            "from_stop_s_median": round(statistics.median(r["from_stop_s"] for r in rows), 4),
            "tables_as_before": all(r["tables_as_before"] for r in rows),
            "entries_sent_again": sum(r["entries_sent_again"] for r in rows),
            "goal_s": GOAL_S, "goals": {
                "median_after_ready_under_1_s": statistics.median(times) < GOAL_S,
                "every_restart_after_ready_under_1_s": times[-1] < GOAL_S,
                "median_from_start_under_1_s": statistics.median(r["from_start_s"] for r in rows) < GOAL_S}}


def print_reconnect(summary: dict[str, Any]) -> None:
    print(f"{summary['switches']} switches over TLS, {summary['restarts']} controller restarts: taken again "
          f"{summary['reconnect_s_median'] * 1000:.0f} ms (median), {summary['reconnect_s_max'] * 1000:.0f} ms (max) "
          f"after the new controller was ready; {summary['from_start_s_median'] * 1000:.0f} ms after it started and "
          f"{summary['from_stop_s_median'] * 1000:.0f} ms after the old one was stopped (medians); tables as before: "
          f"{summary['tables_as_before']}, entries sent again: {summary['entries_sent_again']}")


def plot(rows: list[dict[str, Any]], summary: dict[str, Any], path: Path) -> None:
    from srfabric.lab.plot import pyplot

    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4))
    ax.bar([r["restart"] for r in rows], [r["reconnect_s"] * 1000 for r in rows])
    ax.axhline(GOAL_S * 1000, color="grey", linestyle="--", linewidth=0.8, label="1 s goal")
    ax.set(xlabel="restart", ylabel="ready to all switches taken (ms)",
           title=f"{summary['switches']} switches reconnecting over TLS: median "
                 f"{summary['reconnect_s_median'] * 1000:.0f} ms")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
