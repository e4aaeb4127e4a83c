"""``srfabric bench ab``'s arithmetic: CPU per flow from a capacity step, quartiles, the ratio of the medians from
unrounded values, and a guard that fails on one series over the bar and beyond the spread, not on noise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from srfabric_tools.bench.ab import cpu_rows, summarise


def step(steering: str, offered: float, achieved: float, cpu: float) -> dict[str, str]:
    return {"steering": steering, "offered": str(offered), "achieved": str(achieved), "controller_cpu": str(cpu)}


def rows_of(base: tuple[float, ...], new: tuple[float, ...]) -> list[dict[str, object]]:
    return [{"side": side, "series": "source-routing 500/s CPU per flow (us)", "value": value}
            for side, values in (("base", base), ("new", new)) for value in values]


def test_cpu_per_flow_is_the_busy_share_over_the_flows_set_up_and_peers_are_left_out() -> None:
    rows = cpu_rows("new", 1, [step("source-routing", 500, 500, 0.079), step("os-ken", 500, 500, 0.3),
                               step("hop-by-hop", 2000, 0, 0.5)], "abc")
    assert [(r["series"], round(r["value"], 6)) for r in rows] == [("source-routing 500/s CPU per flow (us)", 158.0)]


def test_a_series_over_the_bar_and_beyond_the_spread_regresses() -> None:
    summary = summarise(rows_of((100.0, 102.0, 98.0, 101.0), (110.0, 111.0, 109.0, 112.0)), within_percent=5)
    series = summary["series"]["source-routing 500/s CPU per flow (us)"]
    assert series["new_over_base"] == pytest.approx(110.5 / 100.5) and series["regressed"]
    assert not summary["goal"]["met"] and summary["regressed"] == ["source-routing 500/s CPU per flow (us)"]


def test_a_median_over_the_bar_within_the_spread_is_noise_not_a_regression() -> None:
    summary = summarise(rows_of((100.0, 80.0, 120.0, 90.0), (110.0, 85.0, 125.0, 95.0)), within_percent=5)
    assert summary["goal"]["met"] and not summary["regressed"]
    assert summarise(rows_of((100.0, 102.0), (104.0, 103.0)), within_percent=5)["goal"]["met"]


def test_the_command_line_exempts_its_loaded_modules_from_the_collector() -> None:
    """A full collection inside a timed step walked every loaded module: S/FR's build step on 90 flows took several
    times its own work whenever cryptography's x509 was loaded (issue 62). ``main`` freezes what is loaded."""
    script = "import gc, srfabric.cli as c; c.main(['tsn', 'methods']); print(gc.get_freeze_count())"
    frozen = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert int(frozen.stdout.split()[-1]) > 10_000


def test_a_series_the_new_side_no_longer_measures_regresses() -> None:
    summary = summarise([row for row in rows_of((100.0, 101.0), ()) if row["side"] == "base"], within_percent=5)
    assert summary["regressed"] == ["source-routing 500/s CPU per flow (us)"] and not summary["goal"]["met"]
