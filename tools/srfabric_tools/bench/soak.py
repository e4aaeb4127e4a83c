"""``srfabric bench soak``: faults that overlap, over minutes, under load, on real switches, with checkers.

Two ``srfabric serve`` instances (a leader and a standby) share a throwaway PostgreSQL cluster that takes TLS
only; the line fabric (h1 - s1 - s2 - s3 - h2, four SR-aware functions on s2) runs in Mininet on Open vSwitch,
every switch connected to both. ``CHAINS`` chains carry numbered UDP through their functions
(``soak_load.Frames``) while the churn makes, changes and deletes chains of its own through the API, and the
faults of the seed (``soak_plan.plan``) are done and undone (``soak_faults``), overlapping, in the first 80 % of
the run. Then every checker reads what happened:

- misdelivered: frames a function saw outside its chain, or not from the function before it in the chain;
- unexplained loss: frames lost outside every window of a fault that could cut a path (a window lasts from the
  fault to its measured convergence);
- lost writes: acknowledged API writes the API or the switches do not show at the end;
- convergence: after each episode of faults (faults that overlap), the time from the undo of its last fault until
  every switch's tables, read back, are what the leader compiled (p99 reported; ``soak_episodes``), and beside it
  each fault's time from its own undo, which counts the hold of the faults overlapping it;
- tracebacks in either instance's log; each instance's RSS and descriptors after warm-up (growth reported).

A violation leaves the seed, the fault timeline and the switches' tables in the run folder.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric_tools.bench.output import machine, provenance, run_folder, write_json
from srfabric_tools.bench.soak_episodes import Episodes
from srfabric_tools.bench.soak_faults import (
    CONVERGE_TIMEOUT_S,
    Done,
    FaultRunner,
    NoLeader,
    Supervisor,
    converge,
    in_sync,
    leader_of,
    wait_for_leader,
)
from srfabric_tools.bench.soak_load import Churn, Frames, gaps_of, lost_writes, make_chains, misdelivered
from srfabric_tools.bench.soak_plan import KINDS, Fault, Targets, percentile, plan, unexplained
from srfabric_tools.bench.takeover import wait_connected
from srfabric_tools.testbed.api_chains import FUNCTIONS, make_groups
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, free_port, line_spec, restartable_postgres
from srfabric_tools.testbed.listening import listen_on

CHAINS, COPIES = 24, 2
UNAWARE = ("v5", "v6")  # SR-unaware functions (the fabric proxies them), beside the four SR-aware ones
BEST_EFFORT = (32000, 32001, 32002, 32003)  # UDP ports no chain classifies: frames go by the default routes
RATE = 20.0  # frames per second per chain
CHAIN_PORT, CHURN_PORT = 31000, 34000
FAULTS_UNTIL = 0.8  # faults start in this part of the run; the rest is quiet, to see everything settle
LAB_KINDS = ("link", "function", "bridge")  # the faults done through Mininet's nodes
LEADER_WAIT_S = 30.0  # a fault on the leader waits this long for one (a restarted database deposes it)


class Soak:
    """One run: the lab, the load, the faults, and what each checker found."""

    def __init__(self, lab: ApiLab, servers: list[ServeProcess], restart_db: Any, seed: int, seconds: float,
                 say: Any, kinds: tuple[str, ...], listening: dict[str, int] | None = None) -> None:
        self.lab, self.servers, self.seed, self.seconds, self.say = lab, servers, seed, seconds, say
        self.kinds = kinds
        self.listening = listening or {}
        self.supervisor = Supervisor(servers)
        self.runner = FaultRunner(lab, servers, self.supervisor, restart_db, self.listening)
        self.done: list[Done] = []
        self.lock = threading.Lock()  # one Mininet command at a time (a node has one shell)
        self.dpids = [self.lab.spec.dpid(name) for name in self.lab.spec.switches]
        self.links = 2 * len(self.lab.spec.links)  # each direction
        self.episodes = Episodes(lambda: in_sync(self.servers, self.dpids, self.links))
        self.start = 0.0
        self.logs: list[str] = []

    def faults(self) -> list[Fault]:
        spec = self.lab.spec
        return plan(self.seed, self.seconds * FAULTS_UNTIL,
                    Targets(tuple(f"{link.a}-{link.b}" for link in spec.links), tuple(spec.functions),
                            tuple(spec.switches), self.kinds))

    def run(self, faults: list[Fault]) -> dict[str, Any]:
        for switch, port in self.listening.items():  # from now on the switches listen and the instances dial
            listen_on(switch, port, tls=False)
        if self.listening and converge(self.servers, self.dpids, self.links, time.monotonic()) is None:
            raise SrfabricError("soak", "the switches were not whole again after they began to listen")
        with self.servers[0].client() as client:
            groups = make_groups(client, self.lab, COPIES) + make_groups(client, self.lab, COPIES, UNAWARE, False)
            chains = make_chains(client, self.lab, groups, CHAINS, CHAIN_PORT, COPIES, FUNCTIONS + UNAWARE)
        for server in self.servers:
            wait_connected(server, len(self.lab.spec.switches))
        stats_before = self.lab.function_stats()
        churn = Churn(self.servers, groups, (self.lab.ports["h1"], self.lab.ports["h2"]), self.seed + 1, CHURN_PORT)
        frames = Frames(self.lab, chains, RATE, self.seconds, BEST_EFFORT)
        self.start = time.monotonic()
        watching = threading.Event()
        threads = [threading.Thread(target=self.supervisor.run, args=(self.start,), daemon=True),
                   threading.Thread(target=churn.run, daemon=True),
                   threading.Thread(target=self.episodes.watch, args=(watching,), daemon=True)]
        threads += [threading.Thread(target=self._fault, args=(fault,), daemon=True) for fault in faults]
        for thread in threads:
            thread.start()
        try:
            for thread in threads[3:]:
                thread.join(self.seconds + 120)
            self.episodes.settled(CONVERGE_TIMEOUT_S + 10)
            churn.stop.set()
            sent, received = frames.results(self.seconds + 120)
            threads[1].join(30)
            final = converge(self.servers, self.dpids, self.links, time.monotonic())
        finally:  # nothing is started again, or written, once the lab goes
            watching.set()
            churn.stop.set()
            self.supervisor.stop.set()
            threads[0].join(60)
        return self._checks(chains, churn, stats_before, sent, received, final)

    def _fault(self, fault: Fault) -> None:
        done = Done(fault)
        self.done.append(done)
        time.sleep(max(0.0, self.start + fault.at_s - time.monotonic()))
        done.started_s = time.monotonic() - self.start
        self.episodes.begin(done)
        try:
            self._do(fault)
            time.sleep(fault.hold_s)
            with self._lab(fault):
                self.runner.undo(fault)
        except (SrfabricError, OSError, RuntimeError, subprocess.SubprocessError) as error:  # a command failed
            done.error = f"{type(error).__name__}: {error}"[:300]
        finally:  # the fault ends whatever happened, or no later episode could be timed
            done.undone_s = time.monotonic() - self.start
            self.episodes.end(done)
        self.say(f"soak: {fault.kind} {fault.target} at {done.started_s:.1f} s for {fault.hold_s:.1f} s"
                 f"{': ' + done.error if done.error else ''}")

    def _do(self, fault: Fault) -> None:
        """Do ``fault``; one on the leader waits up to ``LEADER_WAIT_S`` for one, also when an overlapping fault
        deposed the leader while this one waited for the lab (another fault's step may hold it for seconds)."""
        deadline = time.monotonic() + LEADER_WAIT_S
        while True:
            if fault.kind in ("leader_kill", "api_stop"):
                wait_for_leader(self.servers, max(0.0, deadline - time.monotonic()))
            try:
                with self._lab(fault):
                    self.runner.do(fault)
                return
            except NoLeader:
                if time.monotonic() > deadline:
                    raise

    def _lab(self, fault: Fault) -> Any:
        """The Mininet lock for a fault that uses the lab (a node has one shell); nothing for one that does not,
        so that a kill, a stop or a restart is done and undone on its own time."""
        return self.lock if fault.kind in LAB_KINDS else contextlib.nullcontext()

    def _checks(self, chains: list[Any], churn: Churn, stats_before: dict[str, Any], sent: dict[str, Any],
                received: dict[str, Any], final: float | None) -> dict[str, Any]:
        tables = self.lab.dump_flows()
        index = leader_of(self.servers)
        listed: list[dict[str, Any]] = []
        if index is not None:
            with self.servers[index].client() as client:
                listed = client.list("port_chains")
        windows = [done.window() for done in self.done if done.fault.cuts]
        gaps = gaps_of(sent, received, self.seconds + 10)
        functions = {chain.port: chain.functions for chain in chains}
        wrong = unexplained(gaps, windows, affects=lambda gap, window: window.what[0] != "function"
                            or window.what[1] in functions.get(gap.port, ()))  # a function only its chains
        misplaced = misdelivered(stats_before, self.lab.function_stats(), chains, FUNCTIONS + UNAWARE, BEST_EFFORT)
        lost = lost_writes(churn, listed, tables)
        episodes = self.episodes.done
        waits = [e.converged_s for e in episodes if e.converged_s is not None]
        own = [d.converged_s for d in self.done if d.converged_s is not None]
        timeouts = [d for d in self.done if d.converged_s is None]
        logs = [server.output() for server in self.servers]
        self.logs = logs
        return {
            "faults": len(self.done), "fault_errors": [d.as_dict() for d in self.done if d.error],
            "timeline": [d.as_dict() for d in sorted(self.done, key=lambda d: d.fault.at_s)],
            "frames_sent": sum(sent["sent"].values()), "frames_received": sum(received["got"].values()),
            "frames_lost": sum(g.frames for g in gaps), "frames_backwards": received["backwards"],
            "loss": [[g.port, g.frames, round(g.after_s, 3), round(g.before_s, 3)] for g in gaps],
            "unexplained_loss": [vars(g) for g in wrong], "unexplained_frames": sum(g.frames for g in wrong),
            "misdelivered": sum(misplaced.values()), "misdelivered_by_function": misplaced,
            "lost_writes": len(lost), "lost_write_details": lost[:20],
            "writes": churn.writes, "writes_failed": churn.failed, "writes_unsure": len(churn.unsure),
            "convergence_p99_s": percentile(waits, 0.99), "convergence_median_s":
                statistics.median(waits) if waits else None, "convergence_timeouts": len(timeouts),
            "episodes": len(episodes), "episodes_interrupted": sum(e.interrupted > 0 for e in episodes),
            "episode_timeline": [e.as_dict(self.start) for e in episodes],
            "convergence_from_own_undo_p99_s": percentile(own, 0.99),
            "convergence_from_own_undo_median_s": statistics.median(own) if own else None,
            "final_convergence_s": final, "restarts": self.supervisor.restarts,
            "failed_starts": self.supervisor.failed_starts,
            "tracebacks": sum(log.count("Traceback") for log in logs),
            "rss_growth": rss_growth(self.supervisor.samples), "fds_growth": growth_of(self.supervisor.samples, "fds"),
            "samples": self.supervisor.samples, "chains": len(chains), "tables": tables,
            "chain_functions": [chain.functions for chain in chains],
        }


def growth_of(samples: list[dict[str, Any]], key: str) -> float | None:
    """The longest-lived instance's growth after warm-up (its first quarter): the median of its last five
    samples over the median of the five after warm-up, less one (None with fewer than 12 samples)."""
    by_pid: dict[int, list[dict[str, Any]]] = {}
    for row in samples:
        by_pid.setdefault(row["pid"], []).append(row)
    longest = max(by_pid.values(), key=len, default=[])
    if len(longest) < 12:
        return None
    warm = len(longest) // 4
    first = statistics.median(r[key] for r in longest[warm:warm + 5])
    last = statistics.median(r[key] for r in longest[-5:])
    return last / first - 1 if first else None


def rss_growth(samples: list[dict[str, Any]]) -> float | None:
    return growth_of(samples, "rss_kib")


def violations(found: dict[str, Any]) -> list[str]:
    """What the goals do not allow: each a sentence."""
    out = []
    if found["misdelivered"]:
        out.append(f"{found['misdelivered']} frames misdelivered")
    if found["unexplained_frames"]:
        out.append(f"{found['unexplained_frames']} frames lost outside every repair window")
    if found["lost_writes"]:
        out.append(f"{found['lost_writes']} acknowledged writes lost")
    if found["tracebacks"]:
        out.append(f"{found['tracebacks']} tracebacks in the instances' logs")
    if found["convergence_timeouts"] or found["final_convergence_s"] is None:
        out.append("the switches did not converge after a fault")
    if found["fault_errors"]:
        out.append(f"{len(found['fault_errors'])} faults could not be done")
    return out


def run_bench(minutes: float, seed: int, out: str, say: Any = print, quick: bool = False,
              kinds: tuple[str, ...] | None = None, switches_listen: bool = True) -> tuple[dict[str, Any], Path]:
    """``switches_listen``: each switch listens on a port of its own and both instances dial it (``serve
    --dial``), so that an instance started again takes the switches at once; else the switches connect to the
    instances' (socket-activated) ports and come back on Open vSwitch's own timer."""
    measured_on = machine()
    folder = run_folder(out, "soak")  # at the start: its log names the commit the run began at, as the summary does
    seconds = minutes * 60
    spec = line_spec(len(FUNCTIONS + UNAWARE))
    listening = {name: free_port() for name in spec.switches} if switches_listen else {}
    dials = tuple(arg for port in listening.values() for arg in ("--dial", f"127.0.0.1:{port}"))
    with restartable_postgres() as (url, restart_db), \
            ServeProcess(url, activation=True, extra_args=dials) as first, \
            ServeProcess(url, activation=True, extra_args=dials) as second, \
            ApiLab(spec, first, others=[second]) as lab:
        soak = Soak(lab, [first, second], restart_db, seed, seconds, say, kinds or tuple(KINDS), listening)
        faults = soak.faults()
        say(f"soak: {minutes:g} min, seed {seed}, {len(faults)} faults, {CHAINS} chains at {RATE:g} frames/s each")
        found = soak.run(faults)
    bad = violations(found)
    tables = found.pop("tables")
    samples = found.pop("samples")
    chain_functions = found.pop("chain_functions")
    if bad:  # what it takes to see the run again: the seed is in the summary
        write_json(folder / "tables.json", tables)
        for number, log in enumerate(soak.logs, start=1):
            (folder / f"serve{number}.log").write_text(log)
    write_json(folder / "samples.json", samples)
    summary = {**provenance(measured_on, f"srfabric bench soak --minutes {minutes:g} --seed {seed}"),
               "quick": quick, "minutes": minutes, "seed": seed, **found, "violations": bad,
               "fabric": "h1 - s1 - s2 - s3 - h2 of Open vSwitch (userspace) in Mininet, four SR-aware and two "
                         "SR-unaware (proxied) functions on s2; two srfabric serve instances on PostgreSQL over TLS",
               "switches": "listen; both instances dial them" if switches_listen else "connect to both instances",
               "chains_rate_fps": RATE, "best_effort_ports": list(BEST_EFFORT),
               "chains_through_unaware": sum(bool(set(through) & set(UNAWARE)) for through in chain_functions)}
    write_json(folder / "summary.json", summary)
    plot(summary, folder / "timeline.png")
    return summary, folder


def plot(summary: dict[str, Any], path: Path) -> None:
    """The faults as bars by kind, the frames lost as red marks, each fault's convergence in its label."""
    from srfabric_tools.lab.plot import pyplot

    plt = pyplot()
    kinds = sorted({row["kind"] for row in summary["timeline"]})
    figure, ax = plt.subplots(figsize=(10, 1.6 + 0.5 * max(len(kinds), 1)))
    for row in summary["timeline"]:
        y = kinds.index(row["kind"])
        end = (row["undone_s"] or row["started_s"]) + (row["converged_s"] or 0)
        ax.barh(y, end - row["started_s"], left=row["started_s"], height=0.6, color="tab:blue", alpha=0.5)
    for _, _, after, before in summary["loss"]:  # frames lost, each run of them on one chain
        ax.plot([after, before], [-1, -1], color="grey", linewidth=6, alpha=0.3)
    for gap in summary["unexplained_loss"]:
        ax.plot([gap["after_s"], gap["before_s"]], [-1, -1], color="red", linewidth=6)
    ax.set_yticks(range(-1, len(kinds)), ["frames lost", *kinds])
    ax.set_xlim(0, summary["minutes"] * 60)
    p99 = summary["convergence_p99_s"]
    ax.set(xlabel="seconds from the load's start (a bar: a fault until its convergence)",
           title=f"soak, seed {summary['seed']}: {summary['faults']} faults, {summary['frames_lost']} frames lost "
                 f"({summary['unexplained_frames']} outside a repair window), convergence p99 "
                 f"{'-' if p99 is None else f'{p99:.3f}'} s")
    ax.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
