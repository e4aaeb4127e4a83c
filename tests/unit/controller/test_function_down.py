"""A service function whose port goes down leaves its group's load balancing; a chain with no way left is
reported; the function rejoins when both its ports are up again."""

from __future__ import annotations

import pytest

from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.errors import RoutingError
from srfabric.model import Alternative, Chain, FlowClassifier
from srfabric.model.fabric import ServiceFunction
from srfabric.model.topo import tsn_fig1
from srfabric.rules.placement import chain_placement


def balanced() -> tuple[ControllerCore, Chain]:
    controller = ControllerCore(ControllerConfig())
    controller.fabric = tsn_fig1().to_fabric()
    controller.fabric.add_function(ServiceFunction("a", (1, 8), (1, 9)))
    controller.fabric.add_function(ServiceFunction("b", (1, 10), (1, 11)))
    chain = Chain("c", FlowClassifier(), (), "h1", "h3", chain_id=7,
                  alternatives=(Alternative(("a",), 1), Alternative(("b",), 3)))
    controller.chains = {"c": chain}
    return controller, chain


def test_a_dead_function_leaves_the_group_and_rejoins() -> None:
    controller, chain = balanced()
    fabric = controller.fabric
    both = chain_placement(fabric, chain, "mac-nibble")
    assert [g.type for _, g in both.groups] == ["select"]
    controller.port_status(1, 9, deleted=False, down=True)  # a's egress
    assert fabric.functions_down == {"a"}
    alone = chain_placement(fabric, chain, "mac-nibble")
    assert alone.groups == [] and alone == chain_placement(fabric, Chain(
        "c", FlowClassifier(), ("b",), "h1", "h3", chain_id=7), "mac-nibble")  # all of it through b
    controller.port_status(1, 8, deleted=False, down=True)
    controller.port_status(1, 9, deleted=False, down=False)
    assert fabric.functions_down == {"a"}  # its ingress is still down
    controller.port_status(1, 8, deleted=False, down=False)
    assert fabric.functions_down == set() and chain_placement(fabric, chain, "mac-nibble") == both


def test_a_chain_whose_every_way_is_down_is_reported() -> None:
    controller, chain = balanced()
    controller.port_status(1, 8, deleted=False, down=True)
    controller.port_status(1, 11, deleted=True, down=True)
    with pytest.raises(RoutingError, match=r"chain c: every way .* crosses one that is down \(a, b\)"):
        chain_placement(controller.fabric, chain, "mac-nibble")
    controller.plan_sync()
    assert [(p.field, p.message) for p in controller.problems if p.field == "chain c"] == [
        ("chain c", "every way through its functions crosses one that is down (a, b)")]


def test_hop_by_hop_rules_leave_a_dead_function_out_too() -> None:
    from srfabric.rules.hop_by_hop import compile_hop_by_hop

    controller, chain = balanced()
    fabric = controller.fabric
    controller.port_status(1, 8, deleted=False, down=True)  # a is down: the chain goes through b
    via_b = compile_hop_by_hop(fabric, [Chain("c", FlowClassifier(), ("b",), "h1", "h3", chain_id=7)])
    assert compile_hop_by_hop(fabric, [chain]) == via_b
    controller.port_status(1, 10, deleted=False, down=True)
    problems: list = []
    compile_hop_by_hop(fabric, [chain], problems)
    assert [p.field for p in problems] == ["chain c"]
