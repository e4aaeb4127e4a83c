"""``srfabric bench ab --base REV`` (``make bench-ab BASE=REV``): this checkout against another commit, in one
session, the two run alternately so that drift on the machine falls on both (issue 45's A/B, made a command and
a regression guard). Each round runs, once per side, the order flipped every round: ``srfabric bench capacity
--quick`` (the controller's CPU per new flow set up, per steering and offered rate) and ``srfabric tsn schedule``
with S/FR and S/PR on one 90-flow instance, as a user runs it (build and solve, end to end in the command's own
clock; issue 62 found S/FR's there doubled by a garbage collection walking every loaded module). The base runs
from a git worktree of REV under ``build/ab/``. Each series: both sides' medians with their quartiles and the
ratio of the medians from unrounded values. A series regressed when the new side's median is over the base's by
more than ``--within-percent`` and its lower quartile lies above the base's upper quartile (beyond the spread).
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric_tools.bench.output import machine, provenance, run_folder, write_csv, write_json
from srfabric_tools.lab.stats import quartiles

ROOT = Path(__file__).resolve().parents[3]
SHARED = (".venv-faucet", ".venv-tsnkit", "build/peers", "build/native")  # built by the bootstrap, not in git


def worktree(base: str) -> Path:
    """A checkout of ``base`` under ``build/ab/`` (made once, reused)."""
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{base}^{{commit}}"],
                                capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    except subprocess.CalledProcessError:
        raise SrfabricError("--base", f"{base!r} is not a commit of this repository") from None
    folder = ROOT / "build" / "ab" / commit[:12]
    if not (folder / ".git").exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), commit],
                       capture_output=True, text=True, check=True, timeout=300)
    for shared in SHARED:  # what the bootstrap built here, so that both sides run the same job (peers included)
        here, there = ROOT / shared, folder / shared
        if here.exists() and not there.exists():
            there.parent.mkdir(parents=True, exist_ok=True)
            there.symlink_to(here)
    return folder


def capacity_steps(checkout: Path | None, timeout_s: float) -> list[dict[str, str]]:
    """One quick capacity run (at ``checkout``, else this checkout as installed): its steps.csv rows."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)  # its srfabric first, and its benchmarks with it
    with tempfile.TemporaryDirectory(prefix="srfabric-ab-") as out:
        done = subprocess.run([sys.executable, "-m", "srfabric", "bench", "capacity", "--quick", "--json", "--out",
                               out], env=env, cwd=checkout or ROOT, capture_output=True, text=True,
                              timeout=timeout_s)
        if done.returncode:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise SrfabricError("capacity", f"a quick run failed (exit {done.returncode}): {' | '.join(tail)}")
        steps = next(Path(out).glob("capacity/*/steps.csv"), None)
        if steps is None:
            raise SrfabricError("capacity", "a quick run wrote no steps.csv")
        with steps.open() as handle:
            return list(csv.DictReader(handle))


def cpu_rows(side: str, round_: int, steps: list[dict[str, str]], commit: str) -> list[dict[str, Any]]:
    """CPU microseconds per flow set up, per steering and offered rate (srfabric's own steerings only)."""
    rows = []
    for step in steps:
        achieved = float(step["achieved"])
        if step["steering"] not in ("source-routing", "hop-by-hop") or achieved <= 0:
            continue
        rows.append({"side": side, "round": round_, "series": f"{step['steering']} {float(step['offered']):g}/s "
                     "CPU per flow (us)", "value": float(step["controller_cpu"]) / achieved * 1e6, "commit": commit})
    return rows


def instance(folder: Path) -> Path:
    """The schedulers' 90-flow instance (Erdos-Renyi, 6 switches, 24 hosts; seed 0), made once."""
    if not (folder / "flows.json").exists():
        subprocess.run([sys.executable, "-m", "srfabric", "tsn", "generate", "--model", "er", "--switches", "6",
                        "--hosts", "24", "--links", "38", "--flows", "90", "--seed", "0", "--out", str(folder)],
                       cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    return folder


def schedule_rows(side: str, round_: int, checkout: Path | None, inst: Path, commit: str) -> list[dict[str, Any]]:
    """S/FR and S/PR on ``inst`` as ``srfabric tsn schedule --json`` reports them: build plus solve (ms)."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    rows = []
    for method in ("sfr", "spr"):
        done = subprocess.run([sys.executable, "-m", "srfabric", "tsn", "schedule", "--topology",
                               str(inst / "topology.json"), "--flows", str(inst / "flows.json"), "--method", method,
                               "--slots", "5", "--json"], env=env, cwd=checkout or ROOT, capture_output=True,
                              text=True, timeout=300)
        if done.returncode:
            raise SrfabricError("schedule", f"{method} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        result = json.loads(done.stdout)
        rows.append({"side": side, "round": round_, "series": f"tsn schedule {method}, 90 flows, build + solve (ms)",
                     "value": (result["build_s"] + result["solve_s"]) * 1000, "commit": commit})
    return rows


def summarise(rows: list[dict[str, Any]], within_percent: float) -> dict[str, Any]:
    """Per series: each side's quartiles, new over base (medians, unrounded), and whether it regressed."""
    series: dict[str, Any] = {}
    for name in dict.fromkeys(r["series"] for r in rows):
        by_side = {side: [r["value"] for r in rows if r["series"] == name and r["side"] == side]
                   for side in ("base", "new")}
        if not by_side["base"]:
            continue
        if not by_side["new"]:  # the new side measured nothing where the base did (no flow set up at that rate)
            series[name] = {"base": dict(zip(("q1", "median", "q3"), quartiles(by_side["base"]), strict=True)),
                            "new": None, "new_over_base": None, "regressed": True}
            continue
        base, new = quartiles(by_side["base"]), quartiles(by_side["new"])
        ratio = new[1] / base[1]
        series[name] = {
            "base": {"q1": base[0], "median": base[1], "q3": base[2], "runs": len(by_side["base"])},
            "new": {"q1": new[0], "median": new[1], "q3": new[2], "runs": len(by_side["new"])},
            "new_over_base": ratio, "new_over_base_mean": statistics.fmean(by_side["new"]) / statistics.fmean(
                by_side["base"]),
            "regressed": ratio > 1 + within_percent / 100 and new[0] > base[2]}
    regressed = sorted(name for name, found in series.items() if found["regressed"])
    return {"series": series, "regressed": regressed,
            "goal": {"within_percent": within_percent, "met": bool(series) and not regressed,
                     "how": "no series' median more than that over the base's with its lower quartile above the "
                            "base's upper quartile"}}


def run_ab(base: str, rounds: int, out: str, within_percent: float, say: Callable[[str], None]
           ) -> tuple[dict[str, Any], Path]:
    """``rounds`` alternating rounds of both sides; the folder with runs.csv and summary.json."""
    if rounds < 1:
        raise SrfabricError("--rounds", f"must be >= 1, got {rounds}")
    checkout = worktree(base)
    measured_on = machine()
    base_commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    rows: list[dict[str, Any]] = []
    inst = instance(ROOT / "build" / "ab" / "instance-90")
    for round_ in range(1, rounds + 1):
        sides = [("base", checkout), ("new", None)]
        for side, where in sides if round_ % 2 else sides[::-1]:
            began = time.perf_counter()
            commit = base_commit if side == "base" else measured_on["commit"]
            rows += schedule_rows(side, round_, where, inst, commit)
            rows += cpu_rows(side, round_, capacity_steps(where, timeout_s=1800), commit)
            say(f"round {round_}/{rounds} {side}: {time.perf_counter() - began:.0f} s")
    folder = run_folder(out, "refactor-ab")
    write_csv(folder / "runs.csv", rows)
    summary = {"what": "this checkout against a base commit, run alternately: controller CPU per new flow (`srfabric "
                       "bench capacity --quick`) and S/FR and S/PR on 90 flows (`srfabric tsn schedule`)",
               "base_commit": base_commit, "rounds": rounds,
               **provenance(measured_on, f"srfabric bench ab --base {base} --rounds {rounds}"),
               **summarise(rows, within_percent)}
    write_json(folder / "summary.json", summary)
    return summary, folder
