"""What every lab experiment shares: run settings, measured points, and the context they run in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from srfabric.errors import ModelError
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.lab.stats import summarise


@dataclass(frozen=True)
class Settings:
    """Repetitions and run length per point; ``quick`` also makes the point grids small.

    >>> Settings.choose(quick=False, paper=True)
    Settings(reps=10, seconds=30.0, quick=False)
    >>> Settings.choose(quick=True, paper=False)
    Settings(reps=1, seconds=2.0, quick=True)
    """

    reps: int = 5
    seconds: float = 10.0
    quick: bool = False

    @classmethod
    def choose(cls, quick: bool, paper: bool, reps: int | None = None, seconds: float | None = None) -> Settings:
        if quick and paper:
            raise ModelError("--paper", "cannot be combined with --quick")
        base = cls(1, 2.0, True) if quick else cls(10, 30.0) if paper else cls()
        if reps is not None and not 1 <= reps <= 100:
            raise ModelError("--reps", f"must be within 1..100, got {reps}")
        if seconds is not None and not 1 <= seconds <= 600:
            raise ModelError("--seconds", f"must be within 1..600, got {seconds}")
        return cls(reps or base.reps, seconds or base.seconds, base.quick)


@dataclass
class Point:
    """One measured point: its parameters, the metric, every run and their summary."""

    params: dict[str, Any]
    metric: str
    runs: list[float]

    def row(self) -> dict[str, Any]:
        s = summarise(self.runs)
        return {**self.params, "metric": self.metric, "median": round(s.median, 4), "mean": round(s.mean, 4),
                "ci95": round(s.ci95, 4), "n": s.n}


@dataclass
class Context:
    """Handed to an experiment: the scratch network, the settings and the place for results."""

    lab: NetLab
    settings: Settings
    advance: Callable[[str], None] = lambda label: None
    points: list[Point] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def repeat(self, params: dict[str, Any], sample: Callable[[], dict[str, float]]) -> dict[str, float]:
        """Call ``sample`` ``settings.reps`` times and record one point per metric; returns the medians.

        ``sample`` runs before ``repeat`` returns, so it may use the caller's loop variables.
        """
        runs: dict[str, list[float]] = {}
        for _ in range(self.settings.reps):
            for name, value in sample().items():
                runs.setdefault(name, []).append(value)
        self.advance(" ".join(f"{k}={v}" for k, v in params.items()))
        medians = {}
        for name, values in runs.items():
            point = Point(params, name, values)
            self.points.append(point)
            medians[name] = point.row()["median"]
        return medians


@dataclass(frozen=True)
class Experiment:
    """One experiment: how many points it measures, how, how it is plotted, what the paper showed."""

    name: str
    title: str
    paper: str
    count: Callable[[Settings], int]
    measure: Callable[[Context], None]
    plot: Callable[[list[dict[str, Any]], dict[str, Any], Any], None]
    compare: Callable[[list[dict[str, Any]], dict[str, Any]], list[str]]

    def variant(self, name: str, title: str, paper: str, measure: Callable[[Context], None]) -> Experiment:
        """The same experiment measured another way: its points, plot and comparison kept."""
        return replace(self, name=name, title=title, paper=paper, measure=measure)
