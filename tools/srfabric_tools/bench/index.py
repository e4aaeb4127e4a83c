"""``srfabric bench index``: the results index (``docs/results/index.md``), made from the committed summaries.

Every ``summary.json`` under the results folder is one run. The index lists them by benchmark, newest first:
when and at which commit each ran and by which command, and each goal it states with its value, the paper's
(the anchor's) where the summary names one, the bar, and whether it was met. A summary that lacks its provenance
(``provenance``) is listed as such, so an index never hides where a figure came from. The "code since" column
is ``git diff`` from the run's commit to the working tree over the files the run ran (``exercised``):
"unchanged" means the run measured the code as it is now, which lets a run that takes hours stand for a later
commit.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from srfabric_tools.bench.exercised import closure, exercised_paths
from srfabric_tools.bench.output import CODE
from srfabric_tools.bench.verdicts import across_runs, headline, verdict

PROVENANCE = ("machine.commit", "machine.cpus", "machine.kernel", "date", "command")
VALUE_KEYS = ("ratio", "flows_per_s", "median_ms", "ms", "speedup", "speedup_worst", "value", "net_ns", "pass_net_ns",
              "discard_net_ns", "share")
BOUND_KEYS = {"ratio_at_least": ">= "}  # a value known only as a bound is shown with it
BAR_KEYS = ("goal", "bar_ms", "goal_ns", "goal_ms", "goal_s")
NAMED_FILES = 8  # "code since" names the changed files up to this many


def missing_provenance(summary: dict[str, Any]) -> list[str]:
    """The provenance fields ``summary`` lacks.

    >>> missing_provenance({"machine": {"commit": "abc", "cpus": 2, "kernel": "6.1"}, "date": "2026-11-28"})
    ['command']
    """
    missing = []
    for name in PROVENANCE:
        value: Any = summary
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value in (None, "", "unknown"):
            missing.append(name)
    return missing


def changed_files(commit: str, repo: Path, paths: tuple[str, ...]) -> list[str] | str:
    """The files under ``paths`` that differ now from ``commit`` (or are new and not yet added), or why that
    cannot be told."""
    base = commit.rstrip("+")
    if not re.fullmatch(r"[0-9a-f]{7,40}", base):
        return "(no commit)"
    try:
        done = subprocess.run(["git", "-C", str(repo), "diff", "--name-only", base, "--", *paths],
                              capture_output=True, text=True, timeout=30)
        new = subprocess.run(["git", "-C", str(repo), "ls-files", "--others", "--exclude-standard", "--", *paths],
                             capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return "(git failed)"
    return sorted({*done.stdout.split(), *new}) if done.returncode == 0 else "(commit unknown here)"


def code_since(commit: str, repo: Path, runs: Sequence[str] | None = None,
               changed: Callable[[str, Path, tuple[str, ...]], list[str] | str] = changed_files) -> str:
    """How the code a run ran (``runs``, from ``exercised``; None: all of ``CODE``) differs now from its
    ``commit`` (``+``: it ran with changes of its own): the files changed, named when there are few, and how
    many other code files changed that the run does not run. ``changed``: ``changed_files``, or a memo of it
    while the tree stands still."""
    files = changed(commit, repo, tuple(runs) if runs is not None else CODE)
    if isinstance(files, str):
        return files
    state = "unchanged"
    if files:
        state = f"{len(files)} file{'s' if len(files) > 1 else ''} changed"
        state += ": " + ", ".join(f"`{name}`" for name in files) if len(files) <= NAMED_FILES else ""
    if runs is not None:
        others = changed(commit, repo, CODE)
        if isinstance(others, list) and (elsewhere := len(set(others) - set(files))):
            state += f" ({elsewhere} other code file{'s' if elsewhere > 1 else ''} changed, not run by it)"
    else:
        state += " (whole tree compared)"
    return state + (" (run with local changes)" if commit.endswith("+") else "")


def goal_rows(goals: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(goal, value, anchor, bar, verdict) for each goal a summary states; the verdict is worked out from the
    figures and the bar (``verdicts``), or marked as what the run stated when there is nothing to work it from.

    >>> goal_rows({"capacity": {"flows_per_s": 12000.0, "goal": 10000.0, "met": True}, "no_loss": False})
    [('capacity', '12000', '', '>= 10000', 'met'), ('no_loss', '', '', '', 'stated: not met')]
    >>> goal_rows({"over": {"ratio_at_least": 3.0, "goal": 3.0, "met": True}})
    [('over', '3', '', '>= 3', 'met')]
    """
    rows = []
    for name, goal in goals.items():
        found = verdict(name, goal)
        value = bar = anchor = ""
        if isinstance(goal, dict):
            value = next((str(goal[k]) for k in VALUE_KEYS if k in goal), "") or next(
                (prefix + str(goal[k]) for k, prefix in BOUND_KEYS.items() if k in goal), "")
            anchor = next((str(v) for k, v in goal.items() if k.startswith("paper")), "")
            bar = next((str(goal[k]) for k in BAR_KEYS if k in goal), "")
        if found.met is not None:
            value, bar = found.value, found.bar
        rows.append((name, value, anchor, bar, found.text()))
    return rows


def index_markdown(root: Path, repo: Path | None = None) -> str:
    """The index of every summary under ``root`` (a results folder); ``repo``: the checkout whose code the runs
    are compared with (default: the one this package runs from)."""
    repo = repo or Path(__file__).resolve().parents[3]
    # One build reads a still tree: many runs share a commit and entry files, so each diff and import closure is
    # worked out once.
    changed = functools.cache(changed_files)
    closure.cache_clear()
    runs: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for path in sorted(root.rglob("summary.json")):
        try:
            summary = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            summary = {"unreadable": str(error)}
        folder = path.parent.relative_to(root)
        bench = folder.parts[0] if folder.parts else "."
        runs.setdefault(bench, []).append((folder, summary))
    out = ["# Results index", "",
           "Made by `srfabric bench index` from every committed `summary.json` under `docs/results/`. Each run",
           "names its commit, date, machine and command; a goal's anchor is the published figure it is set against,",
           "where the summary names one. \"Code since\" is `git diff` from the run's commit to the code as it is",
           "now, over the files the run ran: its entry module and every srfabric module it imports or starts, at",
           "any depth, the BPF and C sources and Neutron drivers those use, the command-line files and the Python",
           "pins (`tools/srfabric_tools/bench/exercised.py` finds them). \"Unchanged\" means the run measured today's",
           "code;",
           "otherwise it names the files. Code files changed elsewhere are counted beside it. A run whose command",
           "is not a `srfabric` one is compared over the whole tree. The Makefile and `scripts/` install; they",
           "are not counted. Each verdict is worked out here from the goal's figures and its bar",
           "(`tools/srfabric_tools/bench/verdicts.py`), never read from the run's stored flag; where they differ",
           "the row says what the run said, and \"stated\" marks a goal the run gives no figures to judge by.", ""]
    for bench, found in sorted(runs.items()):
        out += [f"## {bench}", "",
                "| run | date | commit | code since | command | goal | value | anchor | bar | verdict |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for folder, summary in sorted(found, key=lambda item: str(item[1].get("date", "")), reverse=True):
            machine = summary["machine"] if isinstance(summary.get("machine"), dict) else {}
            lacking = missing_provenance(summary)
            commit = str(machine.get("commit", "")) or "(none)"
            where = f"[{folder}]({folder.as_posix()}/summary.json)"
            since = code_since(commit, repo, exercised_paths(summary, folder.as_posix(), repo), changed)
            head = (f"| {where} | {summary.get('date', '(none)')} | {commit} | {since} | "
                    f"`{summary.get('command', '(none)')}` "
                    f"{'(lacks ' + ', '.join(lacking) + ') ' if lacking else ''}")
            goals = summary.get("goals")
            rows = goal_rows(goals) if isinstance(goals, dict) and goals else [("", "", "", "", "")]
            for number, row in enumerate(rows):
                first = head if number == 0 else "| | | | | "
                out.append(first + "| " + " | ".join(cell.replace("|", "/") for cell in row) + " |")
        out += ["", *across_runs_table([summary for _, summary in found])]
    return "\n".join(out)


def across_runs_table(summaries: list[dict[str, Any]]) -> list[str]:
    """Each time or rate goal over the runs at one commit: median, quartiles and the verdict of the worse
    quartile (issue 62); nothing when the benchmark states none."""
    figures: dict[tuple[str, str], list[float]] = {}
    bars: dict[tuple[str, str], tuple[float, bool]] = {}
    for summary in summaries:
        goals = summary.get("goals")
        commit = str(summary.get("machine", {}).get("commit", "")) if isinstance(summary.get("machine"), dict) else ""
        for name, goal in (goals.items() if isinstance(goals, dict) else ()):
            found = headline(goal)
            if found is not None and commit:
                figures.setdefault((name, commit), []).append(found[0])
                bars[(name, commit)] = found[1:]
    if not figures:
        return []
    out = ["Time and rate goals over the runs at one commit (median, quartiles; met only if the run at the worse "
           "quartile meets the bar; 5 runs at least):", "",
           "| goal | commit | runs | median (quartiles) | bar | verdict |", "|---|---|---|---|---|---|"]
    for (name, commit), values in sorted(figures.items()):
        bar, more = bars[(name, commit)]
        spread, said = across_runs(values, bar, more)
        out.append(f"| {name} | {commit} | {len(values)} | {spread} | {'>=' if more else '<='} {bar:g} | {said} |")
    return [*out, ""]


def write_index(root: Path) -> Path:
    target = root / "index.md"
    target.write_text(index_markdown(root))
    return target
