"""The one registry of scheduling methods: every reader uses it, and the design docs show it as it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.formats.generators import erdos_renyi, random_streams
from srfabric.tsn.model.slots import plan
from srfabric.tsn.model.timed import TimedProblem
from srfabric.tsn.schedulers.registry import METHODS, methods_of, methods_table, schedule
from srfabric.tsn.verify.slot import verify
from srfabric.tsn.verify.timed import verify_timed

ROOT = Path(__file__).resolve().parents[3]


def test_the_design_docs_show_the_registry_as_it_is() -> None:
    text = (ROOT / "docs/design/tsn.md").read_text()
    found = re.search(r"<!-- methods-table -->\n(.*?)\n<!-- /methods-table -->", text, re.S)
    assert found, "docs/design/tsn.md has no methods table between its markers"
    assert found.group(1) == methods_table(), "run `srfabric tsn methods` and paste its table into the docs"


def test_every_method_is_of_one_model_and_the_models_cover_them_all() -> None:
    assert set(methods_of("slot")) | set(methods_of("timed")) == set(METHODS)
    assert not set(methods_of("slot")) & set(methods_of("timed"))


@pytest.mark.parametrize("name", [n for n in METHODS if n != "cpsat"])
def test_each_method_schedules_a_problem_of_its_model_and_the_verifier_agrees(name: str) -> None:
    network = erdos_renyi(5, 10, 18, seed=3)
    streams = random_streams(network, 12, seed=3)
    if METHODS[name].model == "timed":
        timed = schedule(TimedProblem.build(network, streams, grid_ns=100), name)
        assert timed.assignments and verify_timed(timed) == []  # type: ignore[arg-type]
    else:
        slotted = schedule(plan(network, streams), name)
        assert slotted.assignments and verify(slotted) == []  # type: ignore[arg-type]


def test_a_method_of_the_other_model_or_an_unknown_name_is_refused_by_name() -> None:
    network = erdos_renyi(5, 10, 18, seed=3)
    streams = random_streams(network, 4, seed=3)
    with pytest.raises(ModelError, match="nowait schedules a TimedProblem"):
        schedule(plan(network, streams), "nowait")
    with pytest.raises(ModelError, match="spr schedules a Problem"):
        schedule(TimedProblem.build(network, streams, grid_ns=100), "spr")
    with pytest.raises(ModelError, match="method: must be one of sur, spr"):
        schedule(plan(network, streams), "ilp")
