"""``srfabric bench tsnkit``: srfabric's schedulers against tsnkit's algorithms on tsnkit's own benchmark.

Instances come from tsnkit's generator (its topologies: line, ring, tree, mesh;
its period, size and deadline options), made once per run with seeded random
generators. Every instance is scheduled by srfabric's fine-grained ``nowait``
and ``cpsat`` (the same, searched further by CP-SAT in its own process where
it leaves streams out) and slot-based ``incremental`` methods, and by each tsnkit
algorithm in a process of its own in tsnkit's virtualenv (``.venv-tsnkit``,
one worker, its time limit). Every schedule, theirs and ours, then goes
through tsnkit's TAS simulator, and each stream's simulated delay is checked
against its deadline.

tsnkit's algorithms schedule an instance whole or not at all, so "streams
scheduled" is all of them when an algorithm reports ``schedulable`` and none
otherwise; srfabric's methods schedule what fits and say why the rest did
not. Runtimes compare like with like: the CPU time of tsnkit's ``solve`` call
(after it has loaded the files and listed its paths; the runner times it)
against the CPU time of srfabric's scheduling call with its candidate paths
listed beforehand, with each hop's timing and their packed form for the C
loop, as tsnkit's ``init`` lists its paths and works out each hop's delay
(``cpsat``, whose search runs in a worker process, on the wall clock). Each
side's whole run (a fresh process for tsnkit, the call with path search for
us) is recorded too, on the wall clock.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.formats import tsnkit
from srfabric.tsn.model.paths import PathFinder
from srfabric.tsn.model.solve_options import SolveOptions
from srfabric.tsn.model.timed import TimedProblem
from srfabric.tsn.schedulers.nowait import native as nowait_native
from srfabric.tsn.schedulers.nowait.heuristic import listed_problem, schedule_nowait
from srfabric.tsn.schedulers.options import SchedulerOptions
from srfabric.tsn.schedulers.registry import METHODS, schedule_slots, schedule_timed
from srfabric.tsn.verify.timed import verify_timed

ROOT = Path(__file__).resolve().parents[3]
TSNKIT_PYTHON = ROOT / ".venv-tsnkit" / "bin" / "python"
RUNNER = Path(__file__).with_name("tsnkit_runner.py")
ALGORITHMS = ("ls", "ls_pl", "ls_tb", "dt", "at", "smt_wa", "smt_fr", "smt_pr", "i_omt")
OURS = ("nowait", "nowait-python", "cpsat", "incremental")  # nowait-python: nowait's loop in Python, not C
TOPOLOGIES = {0: "line", 1: "ring", 2: "tree", 3: "mesh"}
FLOW = re.compile(r"Flow\s+(\d+):\s+Average delay:\s+(\S+)\s+Average jitter:\s+(\S+)")
ERRORS = re.compile(r"\[Potential Errors\]:\s*(\[.*?\])", re.S)


@dataclass(frozen=True)
class Instance:
    """One generated instance: its generator options and its two files."""

    name: str
    topology: str
    switches: int
    streams: int
    period: int  # tsnkit's period option: 1 one period (2 ms), 3 four periods (0.5-4 ms)
    deadline: int  # tsnkit's deadline option: 1 the period, 3 drawn from 10 us to 400 us
    task: Path
    topo: Path


FULL_SIZES = ((8, 10), (8, 50), (16, 100), (32, 200))  # (switches, streams)


def pick_sizes(full: tuple[tuple[int, int], ...], wanted: str | None) -> tuple[tuple[int, int], ...]:
    """The sizes of ``full`` named in ``wanted`` ("32x200,8x10"); all of them if None.

    >>> pick_sizes(FULL_SIZES, "32x200")
    ((32, 200),)
    >>> pick_sizes(FULL_SIZES, "9x9")
    Traceback (most recent call last):
    ...
    srfabric.errors.ModelError: sizes: 9x9 is not a size of the plan (8x10, 8x50, 16x100, 32x200)
    """
    if wanted is None:
        return full
    names = {f"{switches}x{streams}": (switches, streams) for switches, streams in full}
    picked = []
    for name in (part.strip() for part in wanted.split(",")):
        if name not in names:
            raise ModelError("sizes", f"{name} is not a size of the plan ({', '.join(names)})")
        picked.append(names[name])
    return tuple(sorted(set(picked), key=full.index))


@dataclass(frozen=True)
class Plan:
    sizes: tuple[tuple[int, int], ...]  # (switches, streams)
    topologies: tuple[int, ...]
    periods: tuple[int, ...]
    deadlines: tuple[int, ...]
    algorithms: tuple[str, ...]
    time_limit_s: float

    @classmethod
    def make(cls, quick: bool, time_limit_s: float | None = None, sizes: str | None = None) -> Plan:
        if quick:
            return cls(((8, 10),), (1,), (1,), (1,), ("ls", "dt"), time_limit_s or 10.0)
        return cls(pick_sizes(FULL_SIZES, sizes), (0, 1, 2, 3), (1, 3), (1, 3), ALGORITHMS, time_limit_s or 20.0)

    def combinations(self) -> list[tuple[int, int, int, int, int]]:
        """(switches, streams, topology, period, deadline) of every instance. tsnkit lists every simple path
        of a network when it loads it, so meshes stay at 16 switches (a 24-switch mesh did not load in 4 min)."""
        return [(switches, streams, topology, period, deadline)
                for switches, streams in self.sizes for topology in self.topologies
                for period in self.periods for deadline in self.deadlines
                if not (topology == 3 and switches > 16)]


def generate(folder: Path, plan: Plan, seed: int = 1) -> list[Instance]:
    """tsnkit's generator, seeded, for every combination of the plan; one folder per instance."""
    if not TSNKIT_PYTHON.exists():
        raise ModelError("tsnkit", f"{TSNKIT_PYTHON} is missing: run `make bootstrap`, which makes .venv-tsnkit")
    instances = []
    for switches, streams, topology, period, deadline in plan.combinations():
        name = f"{TOPOLOGIES[topology]}-{switches}sw-{streams}st-p{period}-d{deadline}"
        where = folder / name
        where.mkdir(parents=True, exist_ok=True)
        args = ["--num_ins", "1", "--num_stream", str(streams), "--num_sw", str(switches), "--period", str(period),
                "--size", "2", "--deadline", str(deadline), "--topo", str(topology), "--output", f"{where}/"]
        # The generator draws from numpy's and Python's global generators unseeded: seed them first.
        seeded = (f"import random, runpy, sys, numpy; random.seed({seed}); numpy.random.seed({seed}); "
                  "sys.argv = ['generator', *sys.argv[1:]]; "
                  "runpy.run_module('tsnkit.data.generator', run_name='__main__')")
        made = subprocess.run([str(TSNKIT_PYTHON), "-c", seeded, *args], capture_output=True, text=True,
                              cwd=where, timeout=300, check=False)
        if made.returncode != 0:
            said = made.stderr.strip().splitlines()[-1:] or ["no output"]
            raise ModelError("tsnkit", f"its generator failed on {name} (exit {made.returncode}): {said[0]}")
        instances.append(Instance(name, TOPOLOGIES[topology], switches, streams, period, deadline,
                                  where / "1_task.csv", where / "1_topo.csv"))
    return instances


def simulate(task: Path, prefix: Path, timeout_s: float = 900.0) -> dict[str, Any]:
    """tsnkit's TAS simulator on a schedule: its error list and each stream's delay and jitter (ns)."""
    done = subprocess.run([str(TSNKIT_PYTHON), "-m", "tsnkit.simulation.tas", str(task), str(prefix), "--no-draw"],
                          capture_output=True, text=True, timeout=timeout_s, check=False, cwd=prefix.parent)
    found = ERRORS.search(done.stdout)
    errors = found.group(1) if found else "not run: " + done.stderr.strip()[-200:]
    flows = {int(flow): (float(delay), float(jitter)) for flow, delay, jitter in FLOW.findall(done.stdout)}
    return {"errors": errors, "flows": flows}


def deadline_misses(task: Path, flows: dict[int, tuple[float, float]]) -> int:
    """Streams of the task file whose simulated delay is past their deadline, or which never arrived."""
    deadlines = {int(row.split(",")[0]): int(row.split(",")[5]) for row in task.read_text().splitlines()[1:] if row}
    late = 0
    for stream, deadline in deadlines.items():
        delay = flows.get(stream, (float("nan"), 0.0))[0]
        late += not delay <= deadline  # NaN (never delivered) counts as late
    return late


def run_ours(instance: Instance, method: str, out: Path, limit_s: float) -> dict[str, Any]:
    """One srfabric method on one instance: scheduled, times, verifier, tsnkit's simulator, deadlines."""
    network = tsnkit.network_from_tsnkit(instance.topo.read_text())
    streams = tsnkit.streams_from_tsnkit(instance.task.read_text())
    began, list_s = time.perf_counter(), 0.0
    if method.startswith("nowait") or METHODS[method].model == "timed":
        problem = TimedProblem.build(network, streams, tsnkit.TSNKIT_GRID_NS, 0, max(8, instance.switches + 2))
        finder = PathFinder(network, problem.max_hops)
        listing = time.perf_counter()
        listed_problem(problem, finder, 4)  # the candidate paths and their hop times first, as tsnkit's init does
        list_s = time.perf_counter() - listing
        # nowait on the clock tsnkit's runner times its algorithms' solve on (CPU time); cpsat's search runs
        # in a worker process of its own, so it is timed on the wall clock.
        clock = time.process_time if method.startswith("nowait") else time.perf_counter
        options = SchedulerOptions(solve=SolveOptions(time_limit_s=limit_s), k_paths=4)
        listed = clock()
        result = schedule_nowait(problem, 4, finder, native=False) if method == "nowait-python" else \
            schedule_timed(problem, method, options, finder)
        solve_s, problems, scheduled = clock() - listed, verify_timed(result), len(result.assignments)
        exported = result
    else:
        from srfabric.tsn.model.slots import SlotModel, plan, shortest_diameter
        from srfabric.tsn.verify.slot import verify

        model = SlotModel(diameter=shortest_diameter(network, streams), store_and_forward=True,
                          grid_ns=tsnkit.TSNKIT_GRID_NS)
        slotted = schedule_slots(plan(network, streams, model=model), method)
        solve_s, problems, scheduled = slotted.solve_s, verify(slotted), len(slotted.assignments)
        exported = slotted  # type: ignore[assignment]
    folder = out / f"{instance.name}-{method}"
    tsnkit.write_tsnkit(exported, folder)
    total_s = time.perf_counter() - began  # read, build, list paths, solve, verify and write the schedule
    sim: dict[str, Any] = {"errors": "[]", "flows": {}}
    if scheduled:
        sim = simulate(folder / "srfabric-task.csv", folder / "srfabric")
    misses = deadline_misses(folder / "srfabric-task.csv", sim["flows"]) if scheduled else 0
    shutil.rmtree(folder, ignore_errors=True)
    return {"method": method, "side": "srfabric", "result": "schedulable" if scheduled == instance.streams else
            "partial" if scheduled else "unschedulable", "scheduled": scheduled, "solve_s": solve_s,
            "total_s": total_s, "list_s": list_s, "verifier_problems": len(problems), "sim_errors": sim["errors"],
            "deadline_misses": misses}


def run_tsnkit(instance: Instance, algorithm: str, out: Path, limit_s: float) -> dict[str, Any]:
    """One tsnkit algorithm on one instance in its own process; its schedule through the simulator."""
    folder = out / f"{instance.name}-{algorithm}"
    folder.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    try:
        done = subprocess.run([str(TSNKIT_PYTHON), str(RUNNER), algorithm, str(instance.task), str(instance.topo),
                               f"{folder}/", str(limit_s), algorithm], capture_output=True, text=True,
                              timeout=limit_s * 2 + 10, check=False, cwd=folder)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        verdict = json.loads(lines[-1][7:]) if lines else {"result": "error", "fields": []}
    except subprocess.TimeoutExpired:  # some (smt_wa, smt_fr) overrun their own limit while building the model
        verdict = {"result": "unknown", "fields": []}
    total_s = time.perf_counter() - began
    fields = verdict.get("fields", [])
    solve_s = verdict.get("solve_cpu_s") or (float(fields[2]) if len(fields) > 2 else total_s)
    row = {"method": algorithm, "side": "tsnkit", "result": verdict["result"], "scheduled": 0, "solve_s": solve_s,
           "total_s": total_s, "verifier_problems": 0, "sim_errors": "", "deadline_misses": 0}
    if verdict["result"] == "schedulable":
        sim = simulate(instance.task, folder / algorithm)
        row.update(scheduled=instance.streams, sim_errors=sim["errors"],
                   deadline_misses=deadline_misses(instance.task, sim["flows"]))
    shutil.rmtree(folder, ignore_errors=True)
    return row


def accepted(row: dict[str, Any]) -> bool:
    """Whether a run's schedule passed tsnkit's simulator, every deadline and our verifier.

    >>> accepted({"sim_errors": "[]", "deadline_misses": 0, "verifier_problems": 0})
    True
    >>> accepted({"sim_errors": "['flow 3 collides']", "deadline_misses": 0, "verifier_problems": 0})
    False
    """
    return row["sim_errors"] == "[]" and not row["deadline_misses"] and not row["verifier_problems"]


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per instance size and method: streams scheduled and instances fully scheduled (by schedules that passed the
    simulator and the deadline check only), schedules rejected, median solve time; the issue's goals."""
    sizes = sorted({(r["switches"], r["streams"]) for r in rows})
    table: dict[str, dict[str, Any]] = {}
    for switches, streams in sizes:
        key = f"{switches}sw-{streams}st"
        table[key] = {}
        for method in dict.fromkeys(r["method"] for r in rows):
            mine = [r for r in rows if (r["switches"], r["streams"]) == (switches, streams) and r["method"] == method]
            if not mine:
                continue
            table[key][method] = {
                "instances": len(mine),
                # A schedule tsnkit's simulator rejects (or with a stream past its deadline) schedules nothing.
                "scheduled_share": round(statistics.fmean(r["scheduled"] / r["streams"] if accepted(r) else 0.0
                                                          for r in mine), 4),
                "fully_scheduled": sum(r["scheduled"] == r["streams"] and accepted(r) for r in mine),
                # Unrounded: ratios are taken from these (rounding first moved 12.7 times to 14.3).
                "median_solve_s": statistics.median(r["solve_s"] for r in mine),
                "median_total_s": statistics.median(r["total_s"] for r in mine),
                "clean": sum(r["scheduled"] > 0 and accepted(r) for r in mine),
                "with_schedule": sum(r["scheduled"] > 0 for r in mine),
                "rejected": sum(r["scheduled"] > 0 and not accepted(r) for r in mine),
            }
    return {"by_size": table, "goals": goals(table), "per_instance": per_instance(rows)}


def per_instance(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """By size and tsnkit method: tsnkit's solve time over nowait's on each instance both ran, min, median and max
    (solve only, and end to end)."""
    by_instance = {(r["instance"], r["method"]): r for r in rows}
    out: dict[str, Any] = {}
    for (instance, method), theirs in sorted(by_instance.items()):
        ours = by_instance.get((instance, "nowait"))
        if method in OURS or ours is None:
            continue
        key = f"{theirs['switches']}sw-{theirs['streams']}st"
        ratios = out.setdefault(key, {}).setdefault(method, {"solve": [], "total": []})
        ratios["solve"].append(theirs["solve_s"] / max(ours["solve_s"], 1e-9))
        ratios["total"].append(theirs["total_s"] / max(ours["total_s"], 1e-9))
    return {size: {method: {kind: {"min": min(values), "median": statistics.median(values), "max": max(values)}
                            for kind, values in ratios.items()} for method, ratios in methods.items()}
            for size, methods in out.items()}


def goals(table: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """nowait against the best tsnkit algorithm of each size (most streams, then most full instances)."""
    out: dict[str, Any] = {}
    sizes_met = []
    for size, methods in table.items():
        theirs = {m: v for m, v in methods.items() if m not in OURS}
        ours = methods.get("nowait")
        if not theirs or ours is None:
            continue
        best_name, best = max(theirs.items(), key=lambda item: (item[1]["scheduled_share"],
                                                                 item[1]["fully_scheduled"],
                                                                 -item[1]["median_solve_s"]))
        speedup = best["median_solve_s"] / max(ours["median_solve_s"], 1e-9)
        end_to_end = best["median_total_s"] / max(ours["median_total_s"], 1e-9)
        met = (ours["scheduled_share"] >= best["scheduled_share"] and ours["fully_scheduled"] >= best["fully_scheduled"]
               and speedup >= 10)
        out[size] = {"best_tsnkit": best_name, "tsnkit_share": best["scheduled_share"],
                     "nowait_share": ours["scheduled_share"], "tsnkit_full": best["fully_scheduled"],
                     "nowait_full": ours["fully_scheduled"], "speedup": speedup, "speedup_end_to_end": end_to_end,
                     "met": met}
        sizes_met.append(met)
    clean = all(v["clean"] == v["with_schedule"] for methods in table.values() for m, v in methods.items()
                if m in OURS)
    out["srfabric_schedules_all_clean"] = clean
    out["met"] = bool(sizes_met) and all(sizes_met) and clean
    return out


def run_bench(quick: bool, out: str, time_limit_s: float | None = None, seed: int = 1,
              progress: Any = print, sizes: str | None = None) -> tuple[dict[str, Any], Path]:
    """Generate, schedule, simulate; writes runs.csv, summary.json and tsnkit.png."""
    from srfabric_tools.bench.output import machine, provenance, run_folder, write_json, write_runs
    from srfabric_tools.bench.tsnkit_plot import plot

    measured_on = machine()
    plan = Plan.make(quick, time_limit_s, sizes)
    folder = run_folder(out, "tsnkit").resolve()  # tsnkit's tools run in folders below it, given paths in it
    work = folder / "work"
    instances = generate(work / "instances", plan, seed)
    rows: list[dict[str, Any]] = []
    for number, instance in enumerate(instances, start=1):
        progress(f"[{number}/{len(instances)}] {instance.name}")
        base = {"instance": instance.name, "topology": instance.topology, "switches": instance.switches,
                "streams": instance.streams, "period_option": instance.period, "deadline_option": instance.deadline}
        for method in OURS:
            rows.append(base | run_ours(instance, method, work / "runs", plan.time_limit_s))
        for algorithm in plan.algorithms:
            rows.append(base | run_tsnkit(instance, algorithm, work / "runs", plan.time_limit_s))
        # Written after every instance: a long run stopped early keeps what it measured.
        write_runs(folder / "runs.csv", [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()}
                                         for r in rows], measured_on)
    shutil.rmtree(work, ignore_errors=True)
    summary = summarise(rows) | provenance(measured_on, "srfabric bench tsnkit") | {
        "quick": quick, "time_limit_s": plan.time_limit_s, "seed": seed, "instances": len(instances),
        "nowait_native_loaded": nowait_native.available(),
        "sizes": [f"{sw}x{st}" for sw, st in plan.sizes]}
    write_json(folder / "summary.json", summary)
    plot(summary, folder / "tsnkit.png", OURS)
    return summary, folder


NUMBERS = {"switches": int, "streams": int, "period_option": int, "deadline_option": int, "scheduled": int,
           "solve_s": float, "total_s": float, "list_s": float, "verifier_problems": int, "deadline_misses": int}


def summarise_folder(folder: Path) -> dict[str, Any]:
    """A run's summary.json and tsnkit.png made again from its runs.csv, e.g. of a run stopped early: the sizes
    it finished and the instances each covered are what the summary says (``instances_done``)."""
    import csv

    from srfabric_tools.bench.output import machine, provenance, write_json
    from srfabric_tools.bench.tsnkit_plot import plot

    runs = folder / "runs.csv"
    if not runs.is_file():
        raise ModelError("summarise", f"{runs} does not exist")
    with runs.open() as handle:
        rows = [{k: NUMBERS[k](v) if k in NUMBERS and v != "" else v for k, v in row.items()}
                for row in csv.DictReader(handle)]  # (tsnkit's rows time no path listing apart: "")
    if not rows:
        raise ModelError("summarise", f"{runs} lists no run")
    done = sorted({r["instance"] for r in rows})
    summary = summarise(rows) | provenance(machine(), f"srfabric bench tsnkit --summarise {folder}") | {
        "instances_done": len(done), "summarised_from": "runs.csv",
        "rows_measured_at": sorted({str(r.get("commit") or "unknown") for r in rows})}
    write_json(folder / "summary.json", summary)
    plot(summary, folder / "tsnkit.png", OURS)
    return summary
