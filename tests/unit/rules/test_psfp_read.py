"""The per-stream filtering and policing document read back: every plan as it was written, and any damage to the
document (a node removed, a value of the wrong kind or out of range) refused with an error naming the node, never
a traceback."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srfabric.errors import ModelError
from srfabric.rules.yang.psfp_document import ROOMY, psfp_document
from srfabric.rules.yang.psfp_read import read_plans
from tests.unit.tsn.test_psfp import PORTS, edge_plans


def written() -> dict[str, Any]:
    return psfp_document("s1", "00-00-00-00-00-01", edge_plans(), PORTS, ROOMY)


def test_every_plan_reads_back_as_it_was_written() -> None:
    plans = edge_plans()
    back = {plan.handle: plan for plan in read_plans(written(), "s1")}
    assert sorted(back) == sorted(plan.handle for plan in plans)
    for plan in plans:
        got = back[plan.handle]
        assert (got.identity, got.priority, got.max_sdu_bytes, got.gate, got.meter) == (
            plan.identity, plan.priority, plan.max_sdu_bytes, plan.gate, plan.meter)
        assert got.talker == PORTS[plan.talker]


def nodes(tree: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a node of ``tree`` (keys and list indices)."""
    found = [path] if path else []
    children = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else []
    for key, child in children:
        found += nodes(child, (*path, key))
    return found


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_damaged_document_is_refused_naming_a_node_or_read_whole(data: st.DataObject) -> None:
    document = written()
    paths = nodes(document)
    path = data.draw(st.sampled_from(paths))
    damage = data.draw(st.sampled_from(["remove", "text", "negative", "huge", "null", "list"]))
    damaged = copy.deepcopy(document)
    parent = damaged
    for key in path[:-1]:
        parent = parent[key]
    value = {"text": "x", "negative": -1, "huge": 2**70, "null": None, "list": []}.get(damage)
    if damage == "remove":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    try:
        read_plans(damaged, "s1")
    except ModelError as error:
        assert error.field and error.message
    except Exception as error:  # noqa: BLE001 - the point: nothing else escapes
        pytest.fail(f"{damage} at {path} raised {type(error).__name__}: {error}")


def test_a_bridge_not_in_the_document_is_named() -> None:
    with pytest.raises(ModelError, match="no bridge named 's9'"):
        read_plans(written(), "s9")
