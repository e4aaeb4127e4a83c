"""``srfabric bench ab --base REV``: the controller's CPU per new flow at this checkout against another commit, in
one session, the two run alternately so that drift on the machine falls on both (issue 45's A/B, made a
command). Each round runs ``srfabric bench capacity --quick`` once per side, the order flipped every round; the
base runs from a git worktree of REV under ``build/ab/``. The figure is, per steering and offered rate, the
median of the rounds' CPU time per flow set up, with its interquartile range, and the ratio of the medians from
unrounded values.
"""

from __future__ import annotations

import csv
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
        rows.append({"side": side, "round": round_, "steering": step["steering"], "offered": float(step["offered"]),
                     "achieved": achieved, "controller_cpu": float(step["controller_cpu"]),
                     "cpu_us_per_flow": float(step["controller_cpu"]) / achieved * 1e6, "commit": commit})
    return rows


def quartiles(values: list[float]) -> tuple[float, float, float]:
    """(lower quartile, median, upper quartile)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    low, mid, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, mid, high


def summarise(rows: list[dict[str, Any]], within_percent: float) -> dict[str, Any]:
    """Per steering and rate: each side's quartiles, new over base (medians, unrounded), and the verdict."""
    series: dict[str, Any] = {}
    for key in dict.fromkeys((r["steering"], r["offered"]) for r in rows):
        by_side = {side: [r["cpu_us_per_flow"] for r in rows if (r["steering"], r["offered"]) == key
                          and r["side"] == side] for side in ("base", "new")}
        if not by_side["base"] or not by_side["new"]:
            continue
        base, new = quartiles(by_side["base"]), quartiles(by_side["new"])
        series[f"{key[0]} {key[1]:g}/s"] = {
            "base_us": {"q1": base[0], "median": base[1], "q3": base[2], "runs": len(by_side["base"])},
            "new_us": {"q1": new[0], "median": new[1], "q3": new[2], "runs": len(by_side["new"])},
            "new_over_base": new[1] / base[1],
            "new_over_base_mean": statistics.fmean(by_side["new"]) / statistics.fmean(by_side["base"])}
    ratios = [s["new_over_base"] for s in series.values()]
    return {"series": series, "goal": {"cpu_per_flow_within_percent": within_percent,
                                       "met": bool(ratios) and max(ratios) <= 1 + within_percent / 100,
                                       "how": "the median of every series at most that much over the base's"}}


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
    for round_ in range(1, rounds + 1):
        sides = [("base", checkout), ("new", None)]
        for side, where in sides if round_ % 2 else sides[::-1]:
            began = time.perf_counter()
            steps = capacity_steps(where, timeout_s=1800)
            rows += cpu_rows(side, round_, steps, base_commit if side == "base" else measured_on["commit"])
            say(f"round {round_}/{rounds} {side}: {time.perf_counter() - began:.0f} s")
    folder = run_folder(out, "refactor-ab")
    write_csv(folder / "runs.csv", rows)
    summary = {"what": "controller CPU per new flow, this checkout against a base commit, `srfabric bench capacity "
                       "--quick` run alternately", "base_commit": base_commit, "rounds": rounds,
               **provenance(measured_on, f"srfabric bench ab --base {base} --rounds {rounds}"),
               **summarise(rows, within_percent)}
    write_json(folder / "summary.json", summary)
    return summary, folder
