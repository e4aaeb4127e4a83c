"""Schedules exported for tsnkit run through tsnkit's own simulator with no error, no missed deadline and no
jitter: instances from tsnkit's generator, scheduled in full and in part (too few slots for every stream).
tsnkit lives in its own virtualenv, made by the bootstrap."""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path

import pytest

from srfabric.cli import main

TSNKIT_PYTHON = Path(__file__).resolve().parents[2] / ".venv-tsnkit" / "bin" / "python"
STATISTICS = re.compile(r"Flow\s+(\d+):\s+Average delay:\s+(\S+)\s+Average jitter:\s+(\S+)")


def generate(folder: Path, streams: int, period: int, topology: int, deadline: int = 1) -> tuple[Path, Path]:
    """One instance of tsnkit's generator (8 switches; ``topology``: 0 line, 1 ring, 2 tree, 3 mesh;
    ``deadline``: 1 the period, 4 drawn from 0, 10, 20, 25 and 50 us)."""
    folder.mkdir()
    # tsnkit's generator draws from numpy's and Python's global generators without a seed: seed them first.
    args = ["--num_ins", "1", "--num_stream", str(streams), "--num_sw", "8", "--period", str(period), "--size", "2",
            "--deadline", str(deadline), "--topo", str(topology), "--output", f"{folder}/"]
    seeded = ("import random, runpy, sys, numpy; random.seed(1); numpy.random.seed(1); "
              "sys.argv = ['generator', *sys.argv[1:]]; runpy.run_module('tsnkit.data.generator', run_name='__main__')")
    subprocess.run([str(TSNKIT_PYTHON), "-c", seeded, *args], check=True, capture_output=True, cwd=folder)
    return folder / "1_topo.csv", folder / "1_task.csv"


def simulate(task: Path, prefix: Path) -> str:
    done = subprocess.run([str(TSNKIT_PYTHON), "-m", "tsnkit.simulation.tas", str(task), str(prefix), "--no-draw"],
                          check=True, capture_output=True, text=True, timeout=600)
    return done.stdout


@pytest.mark.parametrize(("streams", "period", "topology", "slots", "deadline"), [
    (10, 1, 0, None, 1),  # a line, one period, every stream scheduled
    (30, 3, 3, None, 1),  # a mesh, four periods
    (30, 3, 3, 2, 1),  # the same with two slots: a partial schedule
    (30, 1, 0, None, 4),  # a line with deadlines of 0 to 50 us: the streams none of whose paths meet it left out
])
def test_tsnkit_simulator_accepts_the_export(tmp_path: Path, capsys: pytest.CaptureFixture[str], streams: int,
                                             period: int, topology: int, slots: int | None, deadline: int) -> None:
    assert TSNKIT_PYTHON.exists(), "run `make bootstrap`: it makes .venv-tsnkit"
    topo, task = generate(tmp_path / "instance", streams, period, topology, deadline)
    out = tmp_path / "kit"
    args = ["tsn", "schedule", "--topology", str(topo), "--flows", str(task), "--method", "incremental", "--json",
            "--tsnkit-out", str(out)] + (["--slots", str(slots)] if slots else [])
    assert main(args) == 0
    document = json.loads(capsys.readouterr().out)
    scheduled = len(document["scheduled"])
    if deadline == 1:
        assert (scheduled < streams) == (slots is not None)
    else:  # every stream left out says why: its deadline, or (with the deadline met) no room
        assert 0 < scheduled < streams
        assert all(reason.startswith("deadline_ns:") for reason in document["unscheduled_reasons"].values())
    assert_simulates_cleanly(out, scheduled)


def assert_simulates_cleanly(out: Path, scheduled: int) -> None:
    """tsnkit's simulator on the export in ``out``: no error, every scheduled stream delivered within its
    deadline, jitter 0; the task file lists the scheduled streams only, numbered 0..n-1."""
    rows = (out / "srfabric-task.csv").read_text().splitlines()[1:]
    assert len(rows) == scheduled
    deadlines = {int(row.split(",")[0]): int(row.split(",")[-2]) for row in rows}
    report = simulate(out / "srfabric-task.csv", out / "srfabric")
    assert "[Potential Errors]: []" in report
    seen = STATISTICS.findall(report)
    assert len(seen) == scheduled
    for flow, delay, jitter in seen:
        assert float(delay) <= deadlines[int(flow)] and float(jitter) == 0.0


@pytest.mark.parametrize(("streams", "period", "topology", "deadline"), [
    (40, 1, 1, 1),  # a ring, one period
    (60, 3, 3, 1),  # a mesh, four periods
    (40, 1, 0, 4),  # a line with deadlines of 0 to 50 us
])
def test_tsnkit_simulator_accepts_the_no_wait_schedules(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        streams: int, period: int, topology: int,
                                                        deadline: int) -> None:
    assert TSNKIT_PYTHON.exists(), "run `make bootstrap`: it makes .venv-tsnkit"
    topo, task = generate(tmp_path / "instance", streams, period, topology, deadline)
    out = tmp_path / "kit"
    assert main(["tsn", "schedule", "--topology", str(topo), "--flows", str(task), "--method", "nowait", "--json",
                 "--tsnkit-out", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)
    scheduled = len(document["streams"])
    assert scheduled + len(document["unscheduled"]) == streams
    if deadline == 1:
        assert scheduled == streams
    assert_simulates_cleanly(out, scheduled)


def test_tsnkit_simulator_accepts_a_cpsat_schedule_that_places_more(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """tsnkit's generated instances are light (no-wait places them whole), so this one is made tight by hand
    on the generator's ring: 40 streams of 500-1500 bytes every 100 or 200 us. CP-SAT places more than the
    heuristic; its partial schedule simulates cleanly."""
    assert TSNKIT_PYTHON.exists(), "run `make bootstrap`: it makes .venv-tsnkit"
    topo, _ = generate(tmp_path / "instance", 10, 1, 1)
    rng = random.Random(1)
    rows = ["stream,src,dst,size,period,deadline,jitter"]
    for flow in range(40):
        src, dst = rng.sample(range(8, 16), 2)  # the generator numbers the ring's hosts 8..15
        period = rng.choice([100_000, 200_000])
        rows.append(f"{flow},{src},[{dst}],{rng.choice([500, 1000, 1500])},{period},{period},{period}")
    task = tmp_path / "tight.csv"
    task.write_text("\n".join(rows) + "\n")
    placed = {}
    for method in ("nowait", "cpsat"):
        out = tmp_path / method
        assert main(["tsn", "schedule", "--topology", str(topo), "--flows", str(task), "--method", method,
                     "--time-limit", "20", "--json", "--tsnkit-out", str(out)]) == 0
        document = json.loads(capsys.readouterr().out)
        placed[method] = len(document["streams"])
        assert placed[method] + len(document["unscheduled"]) == 40
        assert_simulates_cleanly(out, placed[method])
    assert placed["nowait"] < placed["cpsat"] < 40


def test_a_slot_methods_partial_schedule_of_100_streams_simulates(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 62 item 8: S/UR scheduling about half of 100 streams (54 here) writes files tsnkit's simulator reads,
    every scheduled stream within its deadline."""
    method = "sur"
    assert TSNKIT_PYTHON.exists(), "run `make bootstrap`: it makes .venv-tsnkit"
    topo, task = generate(tmp_path / "instance", 100, 3, 3, 4)
    out = tmp_path / "kit"
    assert main(["tsn", "schedule", "--topology", str(topo), "--flows", str(task), "--method", method, "--slots", "3"
                 if method == "sur" else "5", "--time-limit", "20", "--json", "--tsnkit-out", str(out)]) == 0
    scheduled = len(json.loads(capsys.readouterr().out)["scheduled"])
    assert 30 < scheduled < 100
    assert_simulates_cleanly(out, scheduled)
