"""``srfabric bench tsnkit --quick`` runs end to end: tsnkit's generator, srfabric's methods and two tsnkit
algorithms, every schedule through tsnkit's simulator, CSV, JSON and plot."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from srfabric.cli import main


def test_quick_bench_compares_with_tsnkit(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a relative --out, as the default "results" is: tsnkit's tools run elsewhere
    assert main(["bench", "tsnkit", "--quick", "--out", "results", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    folder = Path(summary["folder"])
    assert {p.name for p in folder.iterdir()} == {"run.log", "runs.csv", "summary.json", "tsnkit.png"}
    with (folder / "runs.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {r["method"] for r in rows} == {"nowait", "nowait-python", "cpsat", "incremental", "ls", "dt"}
    assert float(rows[0]["list_s"]) > 0 and summary["nowait_native_loaded"] is True  # the bootstrap builds it
    for row in rows:  # a 10-stream ring: every method schedules it, and every schedule simulates cleanly
        assert (row["scheduled"], row["sim_errors"], row["deadline_misses"]) == ("10", "[]", "0"), row
    assert summary["goals"]["srfabric_schedules_all_clean"] is True
    assert (folder / "tsnkit.png").read_bytes()[:4] == b"\x89PNG"
    # A run's summary made again from its runs.csv alone (as for a run stopped early) says the same.
    (folder / "summary.json").unlink()
    assert main(["bench", "tsnkit", "--summarise", str(folder), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    counts = ("instances", "scheduled_share", "fully_scheduled", "clean", "with_schedule")  # times: rounded in the CSV

    def counted(found: dict[str, Any]) -> dict[str, Any]:
        return {size: {m: {k: v[k] for k in counts} for m, v in methods.items()} for size, methods in found.items()}

    assert counted(again["by_size"]) == counted(summary["by_size"]) and again["instances_done"] == 1
