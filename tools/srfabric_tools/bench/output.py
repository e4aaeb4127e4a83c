"""Where benchmark results go and how they are written: one timestamped folder per run."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RUN_LOG = "run.log"


def run_folder(root: str | Path, name: str) -> Path:
    """``<root>/<name>/<UTC timestamp>/``, created, with its ``run.log``: the commit the code runs from (read
    from git here, apart from the summary's), the time and the command line, so that a commit written into a
    summary by hand does not pass for the run's (``tests/unit/tools/test_results_provenance.py``)."""
    import sys

    base = Path(root) / name / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder, index = base, 1
    while folder.exists():  # two runs within one second keep their own folders
        index += 1
        folder = base.with_name(f"{base.name}-{index}")
    folder.mkdir(parents=True)
    made = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (folder / RUN_LOG).write_text(f"commit {source_commit()}\nfolder made {made}\nargv {' '.join(sys.argv)}\n")
    return folder


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """Rows of dicts with the same keys, in order."""
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_runs(path: Path, rows: Sequence[dict[str, Any]], measured_on: dict[str, Any]) -> None:
    """A run's ``runs.csv``: ``rows`` with the commit they were measured at (``machine()``'s) as the first column,
    so a row read on its own still says which code made it."""
    write_csv(path, [{"commit": measured_on.get("commit", "unknown"), **row} for row in rows])


def write_json(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=1) + "\n")


def machine() -> dict[str, Any]:
    """What the figures were measured on, and by which commit of srfabric, with a calibration of the machine as
    it was (``bench/calibration.py``: how fast a core runs a fixed loop, the timer floor, the load, other busy
    processes); ``provenance`` adds the load average at the end."""
    from srfabric_tools.bench.calibration import calibrate

    return {"cpus": os.cpu_count(), "kernel": os.uname().release, "commit": source_commit(),
            "calibration": calibrate()}


def provenance(measured_on: dict[str, Any], command: str) -> dict[str, Any]:
    """What a summary records of its run: the machine and commit (``machine()`` as the run began), the date, and
    the command line (``command`` when not run as ``srfabric bench ...``)."""
    import sys

    from srfabric_tools.bench.calibration import finished

    given = " ".join(["srfabric", *sys.argv[1:]]) if sys.argv[1:2] in (["bench"], ["lab"]) else command
    if "calibration" in measured_on:
        measured_on = {**measured_on, "calibration": finished(measured_on["calibration"])}
    return {"machine": measured_on, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": given}


# What a run exercises: a change to these makes a run's commit "dirty"; documentation and results do not.
CODE = ("srfabric", "tools", "bpf", "native", "bridge", "integrations", "scripts", "pyproject.toml", "constraints.txt",
        "tsnkit-constraints.txt", "Makefile")


def source_commit() -> str:
    """The commit of the checkout this package runs from, ``+`` if its code (``CODE``) differs from it; "unknown"
    outside a git checkout."""
    root = Path(__file__).resolve().parents[3]
    try:  # generous: in the kernel lab git reads the checkout over 9p on an emulated CPU, slower still when busy
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=120, check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                  *CODE], capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+" if changed else "")
