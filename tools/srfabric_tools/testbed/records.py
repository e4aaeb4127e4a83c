"""Each running testbed's names and process ids (its switches, its nodes' shells, its XDP agents and the
processes it started in its nodes), kept in a file of its own while it runs, so that what a killed one left (its
process got SIGKILL, or a CI runner's timeout ended it) is removed by the next testbed.

Mininet names links after switches (``s1-eth1``): without this, every later fabric with the same switch names
fails to make its links ("RTNETLINK answers: File exists"). A record is removed only once the process that
wrote it is gone (the same pid with the same start time is the same process), so testbeds running at once in
other processes keep theirs.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from srfabric_tools.testbed.up_leftovers import remove_leftovers

RECORDS = Path("/run/srfabric/testbeds")


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``); None when there is none.

    >>> process_start(os.getpid()) is not None, process_start(0)
    (True, None)
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else None


def alive(record: dict[str, Any]) -> bool:
    """Whether the process that wrote ``record`` still runs.

    >>> alive({"pid": os.getpid(), "start": process_start(os.getpid())}), alive({"pid": "x"})
    (True, False)
    """
    pid = record.get("pid")
    return isinstance(pid, int) and pid > 0 and process_start(pid) == record.get("start")


class Record:
    """The file of one testbed: written before it builds anything and again once its nodes run, removed when
    it has stopped."""

    def __init__(self, folder: Path = RECORDS) -> None:
        self.path = folder / f"{os.getpid()}-{id(self):x}.json"

    def write(self, switches: list[str], nodes: dict[str, int] | None = None,
              processes: list[int] | None = None) -> None:
        """``nodes``: each node's shell; ``processes``: its XDP agents and what it started in its nodes."""
        record = {"pid": os.getpid(), "start": process_start(os.getpid()), "switches": sorted(switches),
                  "hosts": {name: {"pid": pid} for name, pid in (nodes or {}).items()},
                  "processes": list(processes or [])}
        with contextlib.suppress(OSError):  # a testbed still runs where /run is read-only; it just leaves no note
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(record) + "\n")

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def remove_dead(folder: Path = RECORDS) -> list[str]:
    """Remove what every testbed whose process is gone left, and its record; what was removed, one line each."""
    removed: list[str] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            record = {}
        record = record if isinstance(record, dict) else {}
        if alive(record):
            continue
        removed += remove_leftovers(record)
        path.unlink(missing_ok=True)
    return removed
