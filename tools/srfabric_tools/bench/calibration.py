"""What the machine was like when a run began and ended, recorded in its summary: a fixed CPU-bound loop (how
fast one core is now), the timer floor (the shortest sleep the kernel gives back), the load average before and
after, and the other processes busy meanwhile. Two runs whose calibrations differ measured different machines.

>>> sorted(calibrate(loops=1, sample_s=0.01))
['busy_processes', 'cpu_loop_ms', 'loadavg_before', 'timer_floor_us']
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

LOOP = 300_000  # iterations of the fixed loop: a few milliseconds on one core


def cpu_loop_ms(loops: int = 5) -> float:
    """The median time of the fixed loop, in ms."""
    times = []
    for _ in range(loops):
        started = time.perf_counter()
        total = 0
        for value in range(LOOP):
            total += value * value % 7
        times.append((time.perf_counter() - started) * 1e3)
    return round(statistics.median(times), 3)


def timer_floor_us(samples: int = 200) -> float:
    """The median time a 1 us sleep takes, in us."""
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        time.sleep(1e-6)
        times.append((time.perf_counter() - started) * 1e6)
    return round(statistics.median(times), 1)


def _cpu_ticks() -> dict[int, tuple[str, int]]:
    ticks = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        name, fields = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
        ticks[int(entry.name)] = (name, int(fields[11]) + int(fields[12]))  # utime + stime
    return ticks


def busy_processes(sample_s: float = 0.5, above_percent: float = 10.0) -> list[dict[str, Any]]:
    """Other processes that used more than ``above_percent`` of a core over ``sample_s``."""
    before = _cpu_ticks()
    time.sleep(sample_s)
    after = _cpu_ticks()
    hertz = os.sysconf("SC_CLK_TCK")
    busy = []
    for pid, (name, ticks) in after.items():
        if pid == os.getpid() or pid not in before:
            continue
        percent = (ticks - before[pid][1]) / hertz / sample_s * 100
        if percent > above_percent:
            busy.append({"pid": pid, "name": name, "cpu_percent": round(percent, 1)})
    return sorted(busy, key=lambda process: -process["cpu_percent"])


def calibrate(loops: int = 5, sample_s: float = 0.5) -> dict[str, Any]:
    """The calibration a run records as it begins (``finished`` adds the end's load average)."""
    return {"cpu_loop_ms": cpu_loop_ms(loops), "timer_floor_us": timer_floor_us(),
            "loadavg_before": [round(value, 2) for value in os.getloadavg()],
            "busy_processes": busy_processes(sample_s)}


def finished(calibration: dict[str, Any]) -> dict[str, Any]:
    return {**calibration, "loadavg_after": [round(value, 2) for value in os.getloadavg()]}
