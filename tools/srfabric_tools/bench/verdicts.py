"""Each goal's verdict worked out from the figures its summary holds and the goal's bar, never read from the
``met`` flag the run stored (issue 62: the index said "met" where the data did not). A goal whose summary holds
no figure to judge (a bare flag, or figures without their bar) is shown as what the run *stated*, so a reader sees
which verdicts were computed.

A time goal judged on several runs uses the worse quartile where the summary has it (met only if the run at
that quartile meets the bar). Bars that older summaries do not record are the benchmarks' own (named below).

Examples
--------
>>> verdict("capacity", {"flows_per_s": 12000.0, "goal": 10000.0, "met": True})
Verdict(met=True, value='12000', bar='>= 10000', stored=True)
>>> verdict("sr_cost_vs_redirect", {"ratio": 1.096, "net_ratio": 1.53, "goal": 1.2, "met": True}).text()
'not met (the run said met)'
>>> verdict("over_os_ken_on_ovs", {"ratio": 6.0, "lower_quartile": 4.0, "goal": 3.0, "runs": 5}).value
'4 (lower quartile of 5 runs)'
>>> verdict("over_os_ken_on_ovs", {"ratio": 6.0, "lower_quartile": 4.0, "goal": 3.0, "runs": 1}).met
False
>>> verdict("no_loss", False).text()
'stated: not met'
>>> verdict("over_hop_by_hop", {"ratio": None, "goal": 3.0, "met": True}).text()
'not met (the run said met)'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Goal = dict[str, Any]


@dataclass(frozen=True)
class Verdict:
    """``met`` None: nothing to compute it from (``stored`` is then what the run said)."""

    met: bool | None
    value: str
    bar: str
    stored: bool | None

    def text(self) -> str:
        if self.met is None:
            return "n/a" if self.stored is None else f"stated: {'met' if self.stored else 'not met'}"
        said = "" if self.stored is None or self.stored == self.met else \
            f" (the run said {'met' if self.stored else 'not met'})"
        return ("met" if self.met else "not met") + said


def _g(value: float) -> str:
    return f"{value:.6g}"


def _at_least(value: float, bar: float) -> tuple[bool, str, str]:
    return value >= bar, _g(value), f">= {_g(bar)}"


def _at_most(values: list[float], bar: float, strict: bool = False) -> tuple[bool, str, str]:
    met = all(v < bar if strict else v <= bar for v in values)
    return met, ", ".join(_g(v) for v in values), f"{'<' if strict else '<='} {_g(bar)}"


def _time_ms(goal: Goal) -> tuple[bool, str, str]:
    worse = goal.get("worse_quartile_ms")
    value: Any = worse if worse is not None else goal.get("median_ms", goal.get("ms"))
    met, shown, bar = _at_most([float(value)], float(goal["goal_ms"]), strict=True)
    return met, shown + (" (worse quartile)" if worse is not None else ""), bar


def _sr_cost(goal: Goal) -> tuple[bool, str, str]:
    """Gross and, where measured, net of the timer floor: both must meet the bar."""
    values = [float(goal["ratio"])] + ([float(goal["net_ratio"])] if "net_ratio" in goal else [])
    met, _, bar = _at_most(values, float(goal["goal"]))
    shown = f"gross {_g(values[0])}" + (f", net {_g(values[1])}" if len(values) > 1 else "")
    return met, shown, bar


def _repair(goal: Goal) -> tuple[bool, str, str]:
    """Admission with repair: both one at a time and in a batch (bench tsn: quality >= 0.97, < 2 ms each)."""
    parts = {name: goal[name] for name in ("one_at_a_time", "batch") if isinstance(goal.get(name), dict)}
    each = {name: part["quality_mean"] >= 0.97 and part["per_admission_ms_max"] < 2.0 for name, part in parts.items()}
    shown = "; ".join(f"{name} {part['quality_mean']:.4g} quality, {part['per_admission_ms_max']:.4g} ms"
                      for name, part in parts.items())
    return len(each) == 2 and all(each.values()), shown, ">= 0.97 quality, < 2 ms each, one at a time and in a batch"


def _tsnkit_size(goal: Goal) -> tuple[bool, str, str]:
    """bench tsnkit: nowait schedules as many streams and full instances as tsnkit's best, 10 times faster."""
    speed = float(goal["speedup_end_to_end"] if "speedup_end_to_end" in goal else goal["speedup"])
    met = (goal["nowait_share"] >= goal["tsnkit_share"] and goal["nowait_full"] >= goal["tsnkit_full"]
           and speed >= 10)
    which = "end to end" if "speedup_end_to_end" in goal else "solve only"
    return met, f"{_g(speed)} times ({which}), {goal['nowait_full']} of {goal['tsnkit_full']} full", \
        ">= 10 times, as many streams"


def _lower_quartile(goal: Goal) -> tuple[bool, str, str]:
    """A ratio over repetitions of one run: met only if its lower quartile meets the bar, over at least 5."""
    runs = int(goal.get("runs", 0))
    met, shown, bar = _at_least(float(goal["lower_quartile"]), float(goal["goal"]))
    return met and runs >= 5, f"{shown} (lower quartile of {runs} runs)", f"{bar} over >= 5 runs"


Rule = tuple[Callable[[str, Goal], bool], Callable[[Goal], tuple[bool, str, str]]]
RULES: list[Rule] = [
    (lambda name, g: name.startswith("sr_cost") and {"ratio", "goal"} <= set(g), _sr_cost),
    (lambda name, g: "admission_with_repair" in name, _repair),
    (lambda name, g: {"speedup", "nowait_share", "tsnkit_share"} <= set(g), _tsnkit_size),
    (lambda name, g: "goal_ms" in g, _time_ms),
    (lambda name, g: {"flows_per_s", "goal"} <= set(g), lambda g: _at_least(float(g["flows_per_s"]), g["goal"])),
    (lambda name, g: {"lower_quartile", "goal"} <= set(g), _lower_quartile),
    (lambda name, g: {"ratio", "goal"} <= set(g), lambda g: _at_least(float(g["ratio"]), g["goal"])),
    (lambda name, g: {"ratio_at_least", "goal"} <= set(g), lambda g: _at_least(float(g["ratio_at_least"]),
                                                                                 g["goal"])),
    (lambda name, g: {"median_ms", "bar_ms"} <= set(g), lambda g: _at_most([float(g["median_ms"])], g["bar_ms"])),
    (lambda name, g: {"ms", "goal"} <= set(g), lambda g: _at_most([float(g["ms"])], g["goal"], strict=True)),
    (lambda name, g: {"pass_net_ns", "discard_net_ns", "goal_ns"} <= set(g),
     lambda g: _at_most([float(g["pass_net_ns"]), float(g["discard_net_ns"])], g["goal_ns"])),
    (lambda name, g: {"value", "goal"} <= set(g), lambda g: _at_most([float(g["value"])], g["goal"])),
    (lambda name, g: "speedup_worst" in g, lambda g: _at_least(float(g["speedup_worst"]), 100.0)),  # bench tsn
    (lambda name, g: name.endswith("under_10s") and "ours_s" in g,
     lambda g: _at_most([float(v) for v in g["ours_s"]], 10.0, strict=True)),
    (lambda name, g: {"quality_mean", "per_flow_ms_max"} <= set(g),
     lambda g: (g["quality_mean"] >= 0.95 and g["per_flow_ms_max"] < 1.0,
                f"{g['quality_mean']:.4g} quality, {g['per_flow_ms_max']:.4g} ms", ">= 0.95 quality, < 1 ms")),
]


def verdict(name: str, goal: Any) -> Verdict:
    """``goal``'s verdict from its figures (see the module's docstring)."""
    if not isinstance(goal, dict):
        return Verdict(None, "", "", goal if isinstance(goal, bool) else None)
    stored = goal.get("met") if isinstance(goal.get("met"), bool) else None
    for applies, judge in RULES:
        if applies(name, goal):
            try:
                met, value, bar = judge(goal)
            except TypeError:  # a figure the run recorded as null: nothing measured meets a bar
                return Verdict(False, "none", "", stored)
            except (KeyError, ValueError):
                break  # figures of another shape: nothing to compute from
            return Verdict(bool(met), value, bar, stored)
    return Verdict(None, "", "", stored)


def headline(goal: Any) -> tuple[float, float, bool] | None:
    """A time or rate goal's figure, its bar and whether more is better; None for any other goal."""
    if not isinstance(goal, dict):
        return None
    shapes = ((("flows_per_s", "goal"), True), (("median_ms", "bar_ms"), False), (("median_ms", "goal_ms"), False),
              (("ms", "goal"), False))
    for (value, bar), more in shapes:
        if isinstance(goal.get(value), int | float) and isinstance(goal.get(bar), int | float):
            return float(goal[value]), float(goal[bar]), more
    return None


def across_runs(figures: list[float], bar: float, more: bool) -> tuple[str, str]:
    """(median and quartiles, verdict) of one goal over the runs at one commit: met only if the run at the worse
    quartile meets the bar; fewer than 5 runs give no verdict.

    >>> across_runs([12000.0, 20000.0, 20000.0], 10000.0, True)
    ('20000 (16000-20000)', 'no verdict: 3 runs of the 5 it takes')
    >>> across_runs([30.1, 30.6, 31.1, 29.8, 30.4], 300.0, False)
    ('30.4 (30.1-30.6)', 'met (worse quartile 30.6)')
    >>> across_runs([20.0] * 5, 20.0, False)[1]
    'not met (worse quartile 20)'
    """
    from srfabric_tools.lab.stats import quartiles

    low, middle, high = quartiles(figures)
    spread = f"{_g(middle)} ({_g(low)}-{_g(high)})"
    if len(figures) < 5:
        return spread, f"no verdict: {len(figures)} run{'s' if len(figures) > 1 else ''} of the 5 it takes"
    worse = low if more else high
    met = worse >= bar if more else worse < bar  # a time goal is "under" its bar
    return spread, f"{'met' if met else 'not met'} (worse quartile {_g(worse)})"
