"""``srfabric bench tsn``: the TSSDN paper's Fig. 4c-4f, measured here, next to the paper's figures.

4c: quality (flows scheduled relative to S/UR) of S/PR, S/FR and incremental admission, with and
without repair, of the scenario's requests admitted as one batch (``srfabric.tsn.schedulers.slot.batch``), and (on every
fourth scenario) admission that may move any number of streams
(``srfabric.tsn.schedulers.slot.any_moves``: one ILP per refusal, a reference, not an admission policy).
4d: runtime vs flows; 4e: runtime vs slots; 4f: runtime vs links. The paper ran
CPLEX on 16 cores (4c, 4d) and a 2-core machine (4e, 4f).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.tsn.schedulers.options import SchedulerOptions
from srfabric.tsn.schedulers.registry import schedule_slots as schedule
from srfabric.tsn.schedulers.slot.any_moves import admit_whatever_fits
from srfabric.tsn.schedulers.slot.incremental import Admission
from srfabric.tsn.schedulers.slot.mip import SolveOptions
from srfabric.tsn.schedulers.slot.reoptimise import admit_and_reoptimise
from srfabric.tsn.verify.slot import verify
from srfabric_tools.bench.output import machine, provenance, run_folder, write_json, write_runs
from srfabric_tools.bench.tsn_scenarios import FLOW_COUNTS, Scenario, fig4c, fig4d, fig4e, fig4f

# The paper's figures (section 5.2), quoted in the output next to ours.
PAPER: dict[str, Any] = {
    "quality_mean": {"spr": 0.99, "sfr": 0.97},
    "quality_full": {"spr": 0.67, "sfr": 0.38},
    "fig4d_total_s_100_flows": {"sur": 120.0, "spr": 7.0, "sfr": 3.0},
    "fig4d_per_flow_s": {"sur": 1.1, "spr": 0.061, "sfr": 0.024},
    "fig4f_per_flow_s_256_links": {"spr": 12.0, "sfr": 2.0},
    "incremental_quality": 0.68,
}


REOPTIMISE_EVERY = 10  # requests between two re-optimisations in the repair+reopt variant


@dataclass
class Run:
    """One method on one scenario."""

    scenario: Scenario
    method: str
    variant: str
    scheduled: int
    seconds: float
    build_s: float
    solve_s: float
    status: str

    def row(self) -> dict[str, Any]:
        sc = self.scenario
        return {
            "figure": sc.figure, "topology": sc.topology, "links": sc.links, "flows": sc.flows, "slots": sc.slots,
            "method": self.method, "variant": self.variant, "scheduled": self.scheduled,
            "seconds": round(self.seconds, 6), "per_flow_ms": round(self.seconds / sc.flows * 1000, 4),
            "build_s": round(self.build_s, 6), "solve_s": round(self.solve_s, 6), "status": self.status,
        }


VARIANTS: dict[str, tuple[str, Callable[[SolveOptions], SchedulerOptions]]] = {
    "sur": ("sur", lambda s: SchedulerOptions(solve=s)),
    "spr": ("spr", lambda s: SchedulerOptions(solve=s)),
    "sfr": ("sfr", lambda s: SchedulerOptions(solve=s)),
    "incremental": ("incremental", lambda s: SchedulerOptions(solve=s)),
    # Online admission that may move up to two admitted streams per request (issue 22, item 6).
    "repair": ("incremental", lambda s: SchedulerOptions(solve=s, max_moves=2)),
    # The scenario's requests admitted as one batch: ordered by load on contended links, repair, swaps.
    "batch": ("batch", lambda s: SchedulerOptions(solve=s, max_moves=2)),
    # Admit whatever fits with the admitted streams, moving any number of them (exact check per refusal).
    "any-moves": ("any-moves", lambda s: SchedulerOptions(solve=s)),
    # Admission with repair, and an S/PR re-optimisation of the admitted streams after every 10 requests.
    "repair+reopt": ("repair+reopt", lambda s: SchedulerOptions(solve=s)),
    # The paper's ILPs handed to HiGHS whole: no relaxation first, no start point.
    "spr-ilp": ("spr", lambda s: SchedulerOptions(solve=s, bound_first=False, warm_start=False, slot_order=False)),
    "sfr-ilp": ("sfr", lambda s: SchedulerOptions(solve=s, bound_first=False, warm_start=False, slot_order=False)),
    "sur-flow-ilp": ("sur", lambda s: SchedulerOptions(solve=s, bound_first=False, warm_start=False)),
    "sur-product-ilp": (
        "sur", lambda s: SchedulerOptions(solve=s, bound_first=False, warm_start=False, sur_form="product")
    ),
}


def measure(scenario: Scenario, variant: str, solve: SolveOptions, repeats: int = 1) -> Run:
    """Run one variant (the median of ``repeats`` runs) and check its schedule with the independent verifier."""
    method, make = VARIANTS[variant]
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        if method == "any-moves":
            result = admit_whatever_fits(scenario.problem, solve)
        elif method == "repair+reopt":
            result = admit_and_reoptimise(scenario.problem, every=REOPTIMISE_EVERY, solve=solve)
        else:
            result = schedule(scenario.problem, method, make(solve))
        times.append(time.perf_counter() - began)
    seconds = statistics.median(times)
    problems = verify(result)
    if problems:
        raise AssertionError(f"{variant} on {scenario.topology}: {problems[:3]}")
    return Run(scenario, method, variant, len(result.assignments), seconds, result.build_s, result.solve_s,
               result.status)


@dataclass(frozen=True)
class Plan:
    """Which scenarios and variants a run covers."""

    quality: list[Scenario]
    any_moves: list[Scenario]  # a subset of ``quality``: one ILP per refused stream
    flows: list[Scenario]
    slots: list[Scenario]
    links: list[Scenario]
    forms: list[Scenario]

    @classmethod
    def make(cls, quick: bool, seed: int = 0) -> Plan:
        if quick:
            quality = [sc for i, sc in enumerate(fig4c(seed, (30, 70, 110), per_count=1)) if i % 4 == 0]
            return cls(
                quality=quality,
                any_moves=[sc for sc in quality if sc.flows <= 30],
                flows=list(fig4d(seed, (20, 60, 100))),
                slots=list(fig4e(seed, (5, 50), flows=100)),
                links=list(fig4f(seed, sizes=((4, 24, 30), (10, 200, 256)), flows=50)),
                forms=list(fig4d(seed, (20,))),
            )
        quality = list(fig4c(seed))
        return cls(
            quality=quality,
            any_moves=quality[::4],
            flows=list(fig4d(seed, FLOW_COUNTS)),
            slots=list(fig4e(seed)),
            links=list(fig4f(seed)),
            forms=list(fig4d(seed, (20, 30, 40))),
        )

    def jobs(self) -> list[tuple[str, Scenario, str, int]]:
        """(part, scenario, variant, repeats); the runtime points, and the online admissions (milliseconds,
        where one pause of the interpreter would show), are medians of three runs."""
        out = [("4c", sc, v, 3 if v in ("incremental", "repair", "batch") else 1) for sc in self.quality
               for v in ("sur", "spr", "sfr", "incremental", "repair", "repair+reopt", "batch")]
        out += [("4c", sc, "any-moves", 1) for sc in self.any_moves]
        four_d = ("sur", "spr", "sfr", "incremental", "spr-ilp", "sfr-ilp")
        out += [("4d", sc, v, 3) for sc in self.flows for v in four_d]
        out += [("4e", sc, v, 3) for sc in self.slots for v in ("spr", "sfr", "incremental")]
        out += [("4f", sc, v, 3) for sc in self.links for v in ("spr", "sfr", "incremental")]
        out += [("forms", sc, v, 1) for sc in self.forms for v in ("sur-flow-ilp", "sur-product-ilp")]
        return out


def summarise(runs: list[tuple[str, Run]], measured_on: dict[str, Any] | None = None) -> dict[str, Any]:
    """Quality statistics, runtimes and the issue's goals, with the paper's figures; ``measured_on``: ``machine()``
    as the run began."""
    by_part: dict[str, list[Run]] = {}
    for part, run in runs:
        by_part.setdefault(part, []).append(run)
    summary: dict[str, Any] = {**provenance(measured_on or machine(), "srfabric bench tsn"), "paper": PAPER}
    quality: dict[str, dict[str, float]] = {}
    # Only scenarios where S/UR proved its optimum serve as the reference.
    sur = {id(r.scenario): r.scheduled for r in by_part.get("4c", []) if r.variant == "sur" and r.status == "optimal"}
    summary["sur_not_optimal"] = sum(1 for r in by_part.get("4c", []) if r.variant == "sur" and r.status != "optimal")
    for variant in ("spr", "sfr", "incremental", "repair", "repair+reopt", "batch", "any-moves"):
        ratios = [r.scheduled / sur[id(r.scenario)] for r in by_part.get("4c", [])
                  if r.variant == variant and sur.get(id(r.scenario))]
        if ratios:
            quality[variant] = {
                "mean": round(statistics.mean(ratios), 4),
                "share_full": round(sum(q >= 1 for q in ratios) / len(ratios), 4),
                "share_98": round(sum(q >= 0.98 for q in ratios) / len(ratios), 4),
                "min": round(min(ratios), 4),
                "scenarios": len(ratios),
            }
    summary["quality_vs_sur"] = quality
    unbounded = {id(r.scenario): r for r in by_part.get("4c", []) if r.variant == "any-moves"}
    same = [(r.scheduled, unbounded[id(r.scenario)].scheduled, sur[id(r.scenario)])
            for r in by_part.get("4c", []) if r.variant == "repair" and id(r.scenario) in unbounded
            and sur.get(id(r.scenario))]
    if same:  # the same scenarios side by side: what moving more than two streams would add
        summary["repair_vs_any_moves"] = {
            "scenarios": len(same),
            "any_moves_vs_sur_mean": round(statistics.mean(a / s for _, a, s in same), 4),
            "repair_vs_sur_mean": round(statistics.mean(r / s for r, _, s in same), 4),
            "repair_vs_any_moves_mean": round(statistics.mean(r / a for r, a, _ in same), 4),
            "any_moves_proven": sum(unbounded[k].status == "optimal" for k in unbounded),
        }
    increments = [r for r in by_part.get("4c", []) if r.variant == "incremental"]
    if increments:
        summary["incremental_per_flow_ms"] = {
            "mean": round(statistics.mean(r.seconds / r.scenario.flows * 1000 for r in increments), 4),
            "max": round(max(r.seconds / r.scenario.flows * 1000 for r in increments), 4),
        }
    for variant, key in (("repair", "repair_per_admission_ms"), ("batch", "batch_per_admission_ms")):
        runs_of = [r for r in by_part.get("4c", []) if r.variant == variant]
        if runs_of:  # a batch's time over its requests: what each admission cost
            summary[key] = {
                "mean": round(statistics.mean(r.seconds / r.scenario.flows * 1000 for r in runs_of), 4),
                "max": round(max(r.seconds / r.scenario.flows * 1000 for r in runs_of), 4),
            }
            if variant == "batch":
                summary[key]["whole_batch_max_s"] = round(max(r.seconds for r in runs_of), 4)
    summary["runtime_vs_flows"] = _table(by_part.get("4d", []), "flows")
    summary["runtime_vs_slots"] = _table(by_part.get("4e", []), "slots")
    summary["runtime_vs_links"] = _table(by_part.get("4f", []), "links")
    summary["sur_forms"] = _table(by_part.get("forms", []), "flows")
    summary["goals"] = _goals(summary, by_part.get("4d", []))
    return summary


def _table(runs: Iterable[Run], key: str) -> list[dict[str, Any]]:
    return [
        {key: getattr(r.scenario, key), "variant": r.variant, "scheduled": r.scheduled, "seconds": round(r.seconds, 4),
         "per_flow_ms": round(r.seconds / r.scenario.flows * 1000, 3), "status": r.status}
        for r in runs
    ]


def _goals(summary: dict[str, Any], fig4d_runs: list[Run]) -> dict[str, Any]:
    """The paper gives 7 s (S/PR) and 3 s (S/FR) for "over 100 flows": every point with >= 100 flows counts."""
    goals: dict[str, Any] = {}
    at = [r for r in fig4d_runs if r.scenario.flows >= 100]
    for variant in ("spr", "sfr"):
        ours = [r for r in at if r.variant == variant]
        if ours:
            paper = PAPER["fig4d_total_s_100_flows"][variant]
            slowest = max(ours, key=lambda r: r.seconds)
            goals[f"{variant}_speedup_vs_paper"] = {
                "flows": [r.scenario.flows for r in ours], "ours_s": [round(r.seconds, 4) for r in ours],
                "paper_s": paper, "speedup_worst": round(paper / slowest.seconds, 1),
                "met": paper / slowest.seconds >= 100 and all(r.status == "optimal" for r in ours),
                "quality_mean": summary["quality_vs_sur"].get(variant, {}).get("mean"),
                "paper_quality_mean": PAPER["quality_mean"][variant],
            }
    sur = [r for r in at if r.variant == "sur"]
    if sur:
        goals["sur_100_flows_under_10s"] = {
            "flows": [r.scenario.flows for r in sur], "ours_s": [round(r.seconds, 3) for r in sur],
            "met": all(r.seconds < 10 and r.status == "optimal" for r in sur),
        }
    if "incremental" in summary["quality_vs_sur"]:
        quality = summary["quality_vs_sur"]["incremental"]["mean"]
        per_flow = summary["incremental_per_flow_ms"]["max"]
        goals["incremental"] = {"quality_mean": quality, "per_flow_ms_max": per_flow,
                                "met": quality >= 0.95 and per_flow < 1.0}
    admissions = {}
    for variant, key in (("repair", "one_at_a_time"), ("batch", "batch")):
        if variant in summary["quality_vs_sur"]:
            quality = summary["quality_vs_sur"][variant]["mean"]
            per_admission = summary[f"{variant}_per_admission_ms"]["max"]
            admissions[key] = {"quality_mean": quality, "per_admission_ms_max": per_admission,
                               "met": quality >= 0.97 and per_admission < 2.0}
    if admissions:
        # Requests one at a time in the scenario's order, or the scenario's requests as one batch; both
        # keep every stream they admit and move at most two per admission.
        goals["admission_with_repair"] = {**admissions, "max_moves": 2,
                                          "met": any(entry["met"] for entry in admissions.values())}
        if "repair_vs_any_moves" in summary:  # what one at a time moving any number of streams reaches
            goals["admission_with_repair"]["any_moves"] = summary["repair_vs_any_moves"]
    return goals


def admission_times(scenarios: Iterable[Scenario], max_moves: int = 2) -> dict[str, float]:
    """Milliseconds of each single admission with repair over ``scenarios`` (fresh path cache per scenario,
    as after a controller start): mean, median, 99th percentile and maximum."""
    times = []
    for scenario in scenarios:
        problem = scenario.problem
        admission = Admission(problem.network, problem.slots, problem.cycles, problem.max_hops)
        for stream, multiple in zip(problem.streams, problem.multiples, strict=True):
            began = time.perf_counter()
            admission.admit_with_repair(stream, multiple, None, max_moves)
            times.append((time.perf_counter() - began) * 1000)
    times.sort()
    return {"admissions": len(times), "mean": round(statistics.mean(times), 4),
            "p50": round(times[len(times) // 2], 4), "p99": round(times[int(0.99 * (len(times) - 1))], 4),
            "max": round(times[-1], 4)}


def plot(runs: list[tuple[str, Run]], summary: dict[str, Any], path: Path) -> None:
    """Four panels like the paper's Fig. 4c-4f."""
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    with warnings.catch_warnings():
        # Debian's own mpl_toolkits is visible through the venv's system site packages; 3D is not used here.
        warnings.filterwarnings("ignore", message="Unable to import Axes3D")
        import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(11, 8))
    sur = {id(r.scenario): r.scheduled for p, r in runs if p == "4c" and r.variant == "sur"}
    ax = axes[0][0]
    for variant in ("spr", "sfr", "incremental", "repair", "repair+reopt", "batch", "any-moves"):
        ratios = sorted(r.scheduled / sur[id(r.scenario)] for p, r in runs
                        if p == "4c" and r.variant == variant and sur.get(id(r.scenario)))
        if ratios:
            ax.step([q * 100 for q in ratios], [(i + 1) / len(ratios) for i in range(len(ratios))], where="post",
                    label=f"{variant} (mean {statistics.mean(ratios):.1%}"
                          + (", every 4th scenario)" if variant == "any-moves" else ")"))
    ax.set(title="4c: quality relative to S/UR", xlabel="relative quality (%)", ylabel="CDF of scenarios")
    ax.legend(fontsize=8)
    for ax, part, key, title in (
        (axes[0][1], "4d", "flows", "4d: runtime vs flows (ER, 38 links, 5 slots)"),
        (axes[1][0], "4e", "slots", "4e: runtime per flow vs slots (Waxman, 256 links)"),
        (axes[1][1], "4f", "links", "4f: runtime per flow vs links (100 flows, 50 slots)"),
    ):
        variants = sorted({r.variant for p, r in runs if p == part})
        for variant in variants:
            points = sorted((getattr(r.scenario, key), r.seconds / (1 if part == "4d" else r.scenario.flows))
                            for p, r in runs if p == part and r.variant == variant)
            ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=variant)
        ax.set_yscale("log")
        ax.set(title=title, xlabel=key, ylabel="seconds" + ("" if part == "4d" else " per flow"))
        ax.legend(fontsize=8)
    figure.suptitle(f"srfabric bench tsn: HiGHS on {summary['machine']['cpus']} cores")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def run_bench(quick: bool, out: str, time_limit_s: float, seed: int = 0) -> tuple[dict[str, Any], Path]:
    """Run every part with a progress bar; returns the summary and the results folder."""
    from rich.progress import Progress

    plan = Plan.make(quick, seed)
    solve = SolveOptions(time_limit_s=time_limit_s, seed=seed)
    jobs = plan.jobs()
    measured_on = machine()
    runs: list[tuple[str, Run]] = []
    with Progress(transient=True) as progress:
        task = progress.add_task("bench tsn", total=len(jobs))
        for part, scenario, variant, repeats in jobs:
            progress.update(task, description=f"{part} {scenario.topology} {scenario.flows} flows {variant}")
            runs.append((part, measure(scenario, variant, solve, repeats)))
            progress.advance(task)
    folder = run_folder(out, "tsn")
    write_runs(folder / "runs.csv", [dict(part=p) | r.row() for p, r in runs], measured_on)
    summary = summarise(runs, measured_on)
    summary["repair_single_admission_ms"] = admission_times(plan.quality)
    summary["quick"] = quick
    write_json(folder / "summary.json", summary)
    plot(runs, summary, folder / "fig4.png")
    return summary, folder
