"""The NETCONF figures the README and the results page give are the committed run's: every number is read from the
summary it cites, rounded as printed."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINE7 = ROOT / "docs/results/netconf/20261205T105753Z/summary.json"
FIG7 = ROOT / "docs/results/netconf/20261205T105924Z/summary.json"


def figures(path: Path) -> dict[str, dict[str, float]]:
    return json.loads(path.read_text())["figures"]


def shown(value: float) -> str:
    return f"{value:.2f}"


def test_the_readme_row_is_the_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    summary = json.loads(LINE7.read_text())
    line = figures(LINE7)
    row = next(r for r in readme.splitlines() if r.startswith("| a gate schedule change over NETCONF"))
    for text in (f"{shown(line['median_ms']['median'])} ms median", shown(line["median_ms"]["min"]),
                 shown(line["median_ms"]["max"]), f"p99 {shown(line['p99_ms']['median'])} ms",
                 f"{shown(line['noop_commit_ms']['median'])} ms", f"{shown(line['round_trip_ms']['median'])} ms",
                 summary["machine"]["commit"][:7]):
        assert text in row, text
    assert all(goal["met"] for goal in summary["goals"].values()) and "| yes |" in row
    assert f"takes {shown(line['median_ms']['median'])} ms" in readme


def test_the_results_page_is_the_runs() -> None:
    page = (ROOT / "docs/results/netconf.md").read_text()
    for path in (LINE7, FIG7):
        numbers = figures(path)
        for key in ("median_ms", "p99_ms"):
            assert (f"{shown(numbers[key]['median'])} ms ({shown(numbers[key]['min'])}-"
                    f"{shown(numbers[key]['max'])})") in page, (path, key)
        for key in ("noop_commit_ms", "round_trip_ms", "readback_ms"):
            assert f"{shown(numbers[key]['median'])} ms" in page, (path, key)
        assert f"| {shown(numbers['change_over_noop']['median'])} |" in page
    line = figures(LINE7)
    assert f"{shown(line['median_ms']['q3'])} ms\nand {shown(line['p99_ms']['q3'])} ms" in page
    for key in ("commit_ms", "confirm_ms"):
        assert f"{shown(line[key]['median'])} ms" in page


def test_the_lab_pages_spread_figures_are_the_runs() -> None:
    from srfabric_tools.lab.spread import within_spread

    page = " ".join((ROOT / "docs/lab/tsn-experiments.md").read_text().split())  # lines wrap anywhere
    results = ROOT / "docs/results"
    fig9 = within_spread(results / "tsn-fig9-netconf/20261205T145815Z",
                         [results / "tsn-fig9/20261128T080258Z", results / "tsn-fig9/20261128T161456Z",
                          results / "tsn-fig9/20261205T150020Z"], ("mean_us", "p99_us"))
    for metric, said in (("mean_us", "9 of the 10 schedules' means lie within"), ("p99_us", "(p99: 9 of 10")):
        rows = [row for row in fig9 if row["metric"] == metric]
        worst = max(max(row["low"] - row["value"], row["value"] - row["high"]) for row in rows)
        assert said in page and f"{sum(row['within'] for row in rows)} of" in said
        assert f"{worst:.2f} µs above it" in page
    local = [results / "tsn-fig11/20261128T105057Z", results / "tsn-fig11/20261128T163712Z",
             results / "tsn-fig11/20261205T143706Z"]
    means = [f"phase{n}_mean_us" for n in (1, 2, 3)]
    gated = within_spread(results / "tsn-fig11-netconf/20261205T143343Z", local, means)
    above = [f"{row['value'] - row['high']:.1f}" for row in gated]
    assert not any(row["within"] for row in gated)
    assert f"{above[0]}, {above[1]} and {above[2]} µs above it" in page
    bare = within_spread(results / "tsn-fig11-netconf-no-ptp/20261205T145604Z", local, means)
    assert all(row["within"] for row in bare)
    for row in bare:
        assert f"{row['value']:.2f} in {row['low']:g}-{row['high']:g}" in page


def test_the_changes_under_traffic_figures_are_the_run() -> None:
    page = " ".join((ROOT / "docs/lab/tsn-experiments.md").read_text().split())
    summary = json.loads((ROOT / "docs/results/tsn-netconf-changes/20261205T141922Z/summary.json").read_text())
    points = {row.split(",")[1]: float(row.split(",")[2]) for row in
              (ROOT / "docs/results/tsn-netconf-changes/20261205T141922Z/points.csv").read_text().splitlines()[1:]}
    outside = summary["outside"][0]
    assert len(outside) == points["frames_outside_windows"] and points["ports_not_switched"] == 0
    checked = f"{int(points['frames_checked']):,}"
    assert f"missed by {len(outside)} of {checked}" in page
    early = sorted(-row["from_change_ns"] / 1000 for row in outside)
    assert f"{early[0]:.1f} to {early[-1]:.1f} µs before the base time" in page
    calls = summary["confirm"]
    assert f"{calls['create']['n']} admissions, {calls['create']['median_ms']} ms median" in page


def test_the_hitless_changes_are_the_runs() -> None:
    """Since the switch-over fix, two runs of 101 changes: no probe frame outside its windows, every port switched;
    the lab page, the bridges guide and the README cite both counts."""
    texts = [" ".join((ROOT / name).read_text().split())
             for name in ("docs/lab/tsn-experiments.md", "docs/guide/tsn-bridges.md", "README.md")]
    for run in ("20261206T001125Z", "20261206T002545Z"):
        folder = ROOT / "docs/results/tsn-netconf-changes" / run
        points = {row.split(",")[1]: float(row.split(",")[2]) for row in
                  (folder / "points.csv").read_text().splitlines()[1:]}
        assert points["frames_outside_windows"] == 0 and points["ports_not_switched"] == 0
        assert json.loads((folder / "summary.json").read_text())["outside"] == [[]]
        assert all(f"0 of {int(points['frames_checked']):,}" in text for text in texts)


def test_fig9_and_fig11_at_one_commit_are_the_runs() -> None:
    """The reruns at cc6923e: Fig. 11 over NETCONF within the spread of local runs with the same ptp4l, Fig. 9
    against the four local runs, and the local runs against each other, as the lab page, the guide and the README
    give them."""
    from srfabric_tools.lab.spread import within_spread

    results = ROOT / "docs/results"
    page, readme = (" ".join((ROOT / name).read_text().split()) for name in ("docs/lab/tsn-experiments.md",
                                                                              "README.md"))
    metrics = [f"phase{n}_{kind}_us" for n in (1, 2, 3) for kind in ("mean", "p99")]
    same_clocks = [results / "tsn-fig11-gptp/20261206T033437Z"]
    for others in (same_clocks, [*same_clocks, *sorted((results / "tsn-fig11-gptp").glob("20261205T*"))]):
        rows = within_spread(results / "tsn-fig11-netconf/20261206T030514Z", others, metrics)
        assert len(rows) == 6 and all(row["within"] for row in rows)
    rows = within_spread(results / "tsn-fig11-netconf/20261206T030514Z", same_clocks, metrics[::2])
    said = ", ".join(f"{row['value']:.2f}" for row in rows[:2]) + f" and {rows[2]['value']:.2f} µs"
    assert said in readme and said in page
    for row in rows:
        assert f"{row['low']:.2f} to {row['high']:.2f}" in readme
    local = sorted(p.parent for p in (results / "tsn-fig9").glob("*/runs.csv"))
    assert len(local) == 4
    counts = {}
    for stamp in ("20261206T040328Z", "20261205T145815Z"):
        rows = within_spread(results / "tsn-fig9-netconf" / stamp, local, ("mean_us",))
        counts[stamp] = sum(row["within"] for row in rows)
    assert counts == {"20261206T040328Z": 8, "20261205T145815Z": 10}
    against_each_other = [sum(row["within"] for row in within_spread(run, [o for o in local if o != run],
                                                                       ("mean_us",))) for run in local]
    assert against_each_other == [10, 9, 7, 8]
    assert "lands 10, 9, 7 and 8 of its 10 means within" in page and "**all 10 means within**" in page
    assert "all ten means within the four local runs' spread in one run and eight of ten in the other" in readme
