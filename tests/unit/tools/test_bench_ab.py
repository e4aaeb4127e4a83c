"""``srfabric bench ab``'s arithmetic: CPU per flow from a capacity step, quartiles, the ratio of the medians from
unrounded values, and a verdict that fails on one series over the bar."""

from __future__ import annotations

import pytest

from srfabric_tools.bench.ab import cpu_rows, summarise


def step(steering: str, offered: float, achieved: float, cpu: float) -> dict[str, str]:
    return {"steering": steering, "offered": str(offered), "achieved": str(achieved), "controller_cpu": str(cpu)}


def test_cpu_per_flow_is_the_busy_share_over_the_flows_set_up_and_peers_are_left_out() -> None:
    rows = cpu_rows("new", 1, [step("source-routing", 500, 500, 0.079), step("os-ken", 500, 500, 0.3),
                               step("hop-by-hop", 2000, 0, 0.5)], "abc")
    assert [(r["steering"], round(r["cpu_us_per_flow"], 6)) for r in rows] == [("source-routing", 158.0)]


def test_the_verdict_comes_from_the_medians_of_every_series() -> None:
    rows = [{"side": side, "steering": "source-routing", "offered": 500.0, "cpu_us_per_flow": us}
            for side, values in (("base", (100.0, 102.0, 98.0)), ("new", (104.0, 103.0, 105.0))) for us in values]
    summary = summarise(rows, within_percent=5)
    series = summary["series"]["source-routing 500/s"]
    assert series["new_over_base"] == pytest.approx(104.0 / 100.0) and summary["goal"]["met"]
    assert not summarise(rows, within_percent=3)["goal"]["met"]
