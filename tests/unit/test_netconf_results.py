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
