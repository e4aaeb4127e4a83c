"""Every figure in the README's results table is one its cited runs hold (issue 62): each number of a row's result
cell must be a value of a summary the row cites (a link, a run named by its timestamp beside one, or "the same
runs" as the row above), or a repetition's value in that run's ``runs.csv``, to the digits shown; a sum or a
median over the cited runs of one summary field, or over those of one commit, counts too (e.g. "51 of 60" over
three runs). tsnkit's speed-ups are worked out again from the per-instance times in ``runs.csv`` (the median of
tsnkit's best method over srfabric's ``nowait``, from unrounded values), not read from the summary, which divided
rounded medians. A second test moves each figure in its last digit and expects most moves caught."""

from __future__ import annotations

import csv
import json
import re
import statistics
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)")


def rows() -> Iterator[tuple[str, str, list[Path]]]:
    """(figure, result cell, cited summaries) of each row of the README's results table."""
    text = (ROOT / "README.md").read_text()
    lines = [line for line in text[text.index("| figure | result |"):].splitlines()]
    previous: list[Path] = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        links = re.findall(r"docs/results/([\w-]+)/([\w-]+)/summary\.json", cells[1] + cells[-1])
        paths = [RESULTS / bench / run / "summary.json" for bench, run in links]
        for stamp in re.findall(r"`(T\d{6}Z)`", cells[-1]):
            paths += [path for bench in dict.fromkeys(b for b, _ in links)
                      for path in (RESULTS / bench).glob(f"*{stamp}/summary.json")]
        if not links and "the same runs" in cells[-1]:
            paths = previous
        previous = paths
        yield cells[0], cells[1], paths


def leaves(document: object, path: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(document, dict):
        for key, value in document.items():
            yield from leaves(value, f"{path}.{key}")
    elif isinstance(document, list):
        for value in document:
            yield from leaves(value, path + "[]")
    elif isinstance(document, int | float) and not isinstance(document, bool):
        yield path, float(document)


def tsnkit_speedups(summary: Path) -> list[float]:
    """Per size: the median solve time of tsnkit's best method (the summary names it) over nowait's."""
    goals = json.loads(summary.read_text()).get("goals", {})
    with (summary.parent / "runs.csv").open() as handle:
        runs = list(csv.DictReader(handle))
    found = []
    for size, goal in goals.items():
        if not isinstance(goal, dict) or "best_tsnkit" not in goal:
            continue
        switches, streams = (int(part) for part in re.findall(r"\d+", size))

        def median(method: str, switches: int = switches, streams: int = streams) -> float:
            return statistics.median(float(r["solve_s"]) for r in runs if r["method"] == method
                                     and int(r["switches"]) == switches and int(r["streams"]) == streams)
        found.append(median(goal["best_tsnkit"]) / median("nowait"))
    return found


def per_run_values(table: Path) -> list[float]:
    """A lab run's ``runs.csv`` (metric, run, value): each repetition's value, and each metric's least and most."""
    if not table.exists():
        return []
    with table.open() as handle:
        rows = [row for row in csv.DictReader(handle) if row.get("metric") and row.get("value")]
    by_metric: dict[str, list[float]] = {}
    for row in rows:
        by_metric.setdefault(row["metric"], []).append(float(row["value"]))
    return [value for found in by_metric.values() for value in (*found, min(found), max(found))]


def candidates(paths: list[Path]) -> tuple[list[float], list[float]]:
    """The cited runs' figures: (the summaries' values, their sums and medians; each repetition's value in a lab
    run's ``runs.csv``). Only the first may be read in another unit (ms as s and back)."""
    values: list[float] = []
    tables: list[float] = []
    by_field: dict[tuple[str, str], list[float]] = {}  # by field, over all the cited runs and over each commit's
    for path in paths:
        if path.parent.parent.name == "tsnkit":
            values += tsnkit_speedups(path)
            continue
        summary = json.loads(path.read_text())
        for field, value in leaves(summary):
            values.append(value)
            for group in ("all", str(summary.get("machine", {}).get("commit"))):
                by_field.setdefault((field, group), []).append(value)
        tables += per_run_values(path.parent / "runs.csv")
    for found in by_field.values():
        if len(found) > 1:
            values += [sum(found), statistics.median(found)]
    return values, tables


def shown(number: str, found: tuple[list[float], list[float]]) -> bool:
    """Whether ``number`` is one of the runs' figures to the digits it shows (a summary's seconds shown as ms and
    back too)."""
    value = float(number.replace(",", ""))
    half = 0.5 * 10 ** -(len(number.split(".")[1]) if "." in number else 0) + 1e-9
    values, tables = found
    return any(abs(x * scale - value) <= half for x in values for scale in (1, 1000, 0.001)) or any(
        abs(x - value) <= half for x in tables)


def test_every_figure_of_the_results_table_is_in_the_runs_it_cites() -> None:
    unfound, checked = [], 0
    for figure, result, paths in rows():
        assert paths, f"{figure}: cites no run"
        values = candidates(paths)
        text = re.sub(r"\[[^\]]*\]\([^)]*\)|\b(?=[0-9a-f]*[a-f])[0-9a-f]{7}\b", "", result)  # links, commits
        for number in NUMBER.findall(text):
            checked += 1
            if not shown(number, values):
                unfound.append(f"{figure[:50]}: {number}")
    assert checked > 100 and not unfound, f"figures no cited run holds: {unfound}"


def test_a_figure_changed_in_its_last_digit_is_caught() -> None:
    """The check is not vacuous: most figures shown with decimals, moved by 3 in their last digit, are in no
    cited run."""
    caught, tried = 0, 0
    for _, result, paths in rows():
        values = candidates(paths)
        text = re.sub(r"\[[^\]]*\]\([^)]*\)", "", result)
        for number in NUMBER.findall(text):
            if "." not in number or len(number.replace(",", "").replace(".", "").lstrip("0")) < 3:
                continue
            moved = number[:-1] + str((int(number[-1]) + 3) % 10)
            tried += 1
            caught += not shown(moved, values)
    assert tried > 40 and caught >= 0.8 * tried, f"{caught} of {tried} moved figures caught"
