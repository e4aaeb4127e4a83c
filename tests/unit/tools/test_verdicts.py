"""The index's verdicts are worked out from the figures, not copied from the flag a run stored (issue 62): the
rows the stored flags got wrong say so; a goal with nothing to judge by is marked as stated."""

from __future__ import annotations

import json
from pathlib import Path

from srfabric_tools.bench.index import goal_rows

RESULTS = Path(__file__).resolve().parents[3] / "docs" / "results"


def rows_of(run: str) -> dict[str, tuple[str, str, str, str, str]]:
    return {row[0]: row for row in goal_rows(json.loads((RESULTS / run / "summary.json").read_text())["goals"])}


def test_the_sr_cost_is_not_met_on_its_net_ratio_though_the_run_said_met() -> None:
    row = rows_of("dataplane/20261202T000041Z")["sr_cost_vs_redirect"]
    assert row[1:] == ("gross 1.096, net 1.53", "", "<= 1.2", "not met (the run said met)")


def test_a_ratio_the_run_recorded_as_null_is_not_met() -> None:
    assert rows_of("capacity/20261128T201706Z")["over_hop_by_hop"][4] == "not met (the run said met)"


def test_admission_with_repair_needs_both_ways_of_admitting() -> None:
    verdict = rows_of("tsn/20261202T004223Z")["admission_with_repair"][4]
    assert verdict == "not met (the run said met)"


def test_a_bare_flag_is_shown_as_stated() -> None:
    assert goal_rows({"no_loss": True}) == [("no_loss", "", "", "", "stated: met")]
