"""Where benchmark results go and how they are written: one timestamped folder per run."""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def run_folder(root: str | Path, name: str) -> Path:
    """``<root>/<name>/<UTC timestamp>/``, created."""
    base = Path(root) / name / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder, index = base, 1
    while folder.exists():  # two runs within one second keep their own folders
        index += 1
        folder = base.with_name(f"{base.name}-{index}")
    folder.mkdir(parents=True)
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


def write_json(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=1) + "\n")


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {"cpus": os.cpu_count(), "kernel": os.uname().release}
