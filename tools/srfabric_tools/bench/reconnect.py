"""``srfabric bench reconnect``: how soon a fabric is back under a restarted controller, over TLS.

A k=4 fat-tree (20 Open vSwitch bridges in Mininet) is served by ``srfabric serve --openflow-tls``; the bridges
show one certificate naming the 20 datapath ids. The controller is stopped (SIGTERM) and started again on the same
ports and database ``restarts`` times in each of two modes, one after the other in the same run:

- ``connect``: the bridges connect to the controller (``ssl:``), each controller record with ``max_backoff=1000``
  (Open vSwitch's least, in ms; its default of 8 s is how long a bridge may wait between attempts). After a
  connection ends, a bridge waits a whole second before it tries again.
- ``dial``: the bridges listen (``pssl:PORT``, ``type=primary``) and the controller dials them (``serve --dial``)
  as soon as it runs.

A restart ends when the last of the 20 switches is taken (TLS handshake, OpenFlow handshake, identity check,
role, read-back), as the fabric view's ``connected_since`` says; the new process takes switches before its API is
up. It is timed from the stop of the old process and from the start of the new one, beside how long the stop took
and how long the new process took to have its API up. Then the tables are compared with those held before the
first restart, and the entries younger than the restart (sent again) are counted.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.model.topo import fat_tree
from srfabric.security.pki import make_ca, make_certificate
from srfabric_tools.bench.output import machine, provenance, run_folder, write_csv, write_json
from srfabric_tools.bench.takeover import entries_younger_than, wait_connected
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, free_port
from srfabric_tools.testbed.listening import listen_for_controller

GOAL_S = 1.0
MAX_BACKOFF_MS = 1000
MODES = ("connect", "dial")
MODE_NAMES = {"connect": "switches connect (ssl:)", "dial": "the controller dials (pssl:, serve --dial)"}


def fast_reconnect(bridges: list[str]) -> None:
    """Every controller record of ``bridges`` retries at least once a second (``max_backoff``)."""
    for bridge in bridges:
        records = subprocess.run(["ovs-vsctl", "--timeout=10", "get", "bridge", bridge, "controller"],
                                 capture_output=True, text=True, check=True).stdout.strip(" []\n")
        for record in filter(None, (r.strip() for r in records.split(","))):
            subprocess.run(["ovs-vsctl", "--timeout=10", "set", "controller", record,
                            f"max_backoff={MAX_BACKOFF_MS}"], check=True, capture_output=True)


def restart_once(lab: ApiLab, number: int, before: dict[str, list[str]]) -> dict[str, Any]:
    """One restart. When each switch was taken comes from the fabric view's ``connected_since`` (the wall clock):
    the new process takes switches before its API is up, so asking the API cannot tell."""
    serve, switches = lab.serve, len(lab.spec.switches)
    wall = time.time() - time.monotonic()  # the wall clock's lead, to read connected_since on the monotonic clock
    stopped = time.monotonic()
    serve.stop()
    serve.start()
    api_up = time.monotonic()
    wait_connected(serve, switches, poll=0.01)
    with serve.client() as client:
        found = client.get("/v2.0/srfabric/fabric")["fabric"]["switches"]
    taken = max(s["connected_since"] for s in found) - wall
    time.sleep(1.0)  # a sync that would change anything has run by now
    return {"restart": number, "from_stop_s": round(taken - stopped, 4),
            "from_start_s": round(taken - serve.spawned_at, 4), "api_up_s": round(api_up - serve.spawned_at, 4),
            "stop_s": round(serve.spawned_at - stopped, 4), "tables_as_before": lab.dump_flows() == before,
            "entries_sent_again": entries_younger_than(lab, time.monotonic() - stopped)}


class SwitchesOnly(ApiLab):
    """The fabric and its discovery, without hosts learned or functions started (nothing here needs them)."""

    def start(self) -> None:
        from srfabric_tools.testbed.net import Testbed

        self.testbed = Testbed(self.spec, self.serve.openflow_port, tls=self.serve.tls)
        self.testbed.start()
        with self.serve.client() as client:
            self.wait_for_discovery(client)


def run_reconnect(quick: bool, out: str, say: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    measured_on = machine()
    restarts = 3 if quick else 20
    spec = fat_tree(4)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="srfabric-reconnect-") as scratch:
        pki = Path(scratch) / "pki"
        make_certificate(pki, make_ca(pki), "controller")
        with ServeProcess(f"sqlite:///{scratch}/api.db", tls=pki, activation=True) as serve, \
                SwitchesOnly(spec, serve) as lab:
            fast_reconnect(list(spec.switches))
            time.sleep(1.0)
            before = lab.dump_flows()
            for mode in MODES:
                if mode == "dial":  # the bridges listen now, and the controller is told where
                    dials = listen_for_controller(spec, pki, free_port)
                    serve.extra_args = (*serve.extra_args, *(word for a in dials for word in ("--dial", a)))
                    serve.stop()
                    serve.start()
                    wait_connected(serve, len(spec.switches), poll=0.01)
                    time.sleep(1.0)
                for number in range(1, restarts + 1):
                    row = {"mode": mode} | restart_once(lab, number, before)
                    say(f"{mode} restart {number}: {len(spec.switches)} switches taken {row['from_stop_s'] * 1000:.0f}"
                        f" ms after the stop, {row['from_start_s'] * 1000:.0f} ms after the new process started "
                        f"(its API up after {row['api_up_s'] * 1000:.0f} ms); tables as before: "
                        f"{row['tables_as_before']}, entries sent again: {row['entries_sent_again']}")
                    rows.append(row)
    modes = {mode: summarise([r for r in rows if r["mode"] == mode]) for mode in MODES}
    summary: dict[str, Any] = {
        "switches": len(spec.switches), "restarts_per_mode": restarts, "quick": quick, "tls": True,
        "ovs_max_backoff_ms": MAX_BACKOFF_MS, "goal_s": GOAL_S, "modes": modes,
        "goals": {f"every_{mode}_restart_from_stop_under_1_s": modes[mode]["from_stop_s_max"] < GOAL_S
                  for mode in MODES}}
    summary.update(provenance(measured_on, f"srfabric bench reconnect{' --quick' if quick else ''}"))
    folder = run_folder(out, "reconnect")
    write_csv(folder / "restarts.csv", [row | {"commit": measured_on["commit"]} for row in rows])
    write_json(folder / "summary.json", summary)
    plot(rows, summary, folder / "reconnect.png")
    return summary, folder


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians and maxima of one mode's restarts."""
    out: dict[str, Any] = {"restarts": len(rows)}
    for key in ("from_stop_s", "from_start_s", "api_up_s", "stop_s"):
        values = [r[key] for r in rows]
        out[f"{key}_median"], out[f"{key}_max"] = round(statistics.median(values), 4), max(values)
    out["under_1_s_from_stop"] = sum(r["from_stop_s"] < GOAL_S for r in rows)
    out["tables_as_before"] = all(r["tables_as_before"] for r in rows)
    out["entries_sent_again"] = sum(r["entries_sent_again"] for r in rows)
    return out


def print_reconnect(summary: dict[str, Any]) -> None:
    for mode, got in summary["modes"].items():
        print(f"{summary['switches']} switches over TLS, {got['restarts']} restarts, {MODE_NAMES[mode]}: all taken "
              f"again {got['from_stop_s_median'] * 1000:.0f} ms (median), {got['from_stop_s_max'] * 1000:.0f} ms "
              f"(max) after the old controller was stopped ({got['under_1_s_from_stop']} under 1 s); "
              f"{got['from_start_s_median'] * 1000:.0f} ms after the new one started (its API up after "
              f"{got['api_up_s_median'] * 1000:.0f} ms; medians); tables as before: "
              f"{got['tables_as_before']}, entries sent again: {got['entries_sent_again']}")


def plot(rows: list[dict[str, Any]], summary: dict[str, Any], path: Path) -> None:
    from srfabric_tools.lab.plot import pyplot

    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4))
    for offset, mode in ((-0.2, "connect"), (0.2, "dial")):
        mine = [r for r in rows if r["mode"] == mode]
        ax.bar([r["restart"] + offset for r in mine], [r["from_stop_s"] * 1000 for r in mine], width=0.4,
               label=f"{MODE_NAMES[mode]} (median {summary['modes'][mode]['from_stop_s_median'] * 1000:.0f} ms)")
    ax.axhline(GOAL_S * 1000, color="grey", linestyle="--", linewidth=0.8, label="1 s goal")
    ax.set(xlabel="restart", ylabel="stop to all switches taken (ms)",
           title=f"{summary['switches']} switches reconnecting over TLS after a controller restart")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
