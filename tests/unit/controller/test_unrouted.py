"""A chain that loses every path is reported (the controller's problems, the API's fabric view, the log once)
and routed again by itself when a path returns."""

from __future__ import annotations

import logging

import pytest

from srfabric.api.resources.views import unrouted
from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.errors import SrfabricError
from tests.unit.rules.test_rules_walk import demo_fabric, sfp_chains


def test_a_chain_without_a_path_is_reported_once_and_repaired_when_a_path_returns(
        caplog: pytest.LogCaptureFixture) -> None:
    controller = ControllerCore(ControllerConfig())
    controller.fabric = demo_fabric()
    controller.chains = {chain.name: chain for chain in sfp_chains(3)}
    edge = controller.fabric.hosts["h16"].dpid
    cut = {a: b for a, b in controller.fabric.links.items() if a[0] == edge}

    def scenario() -> tuple[list[str], list[str], list[str]]:
        assert controller.plan_sync() == []  # no switch is connected: a sync compiles, and sends nothing
        before = [p.field for p in controller.problems]
        for end in cut:
            controller.fabric.remove_link(end)
        controller.plan_sync()
        controller.plan_sync()  # the same problems again: not logged again
        during = sorted(p.field for p in controller.problems)
        for a, b in cut.items():
            controller.fabric.add_link(a, b)
        controller.plan_sync()
        return before, during, [p.field for p in controller.problems]

    with caplog.at_level(logging.WARNING, logger="srfabric.controller.controller"):
        before, during, after = scenario()
    assert before == [] and after == []
    assert {f"chain SFP{i}" for i in (1, 2, 3)} <= set(during)
    said = [r.getMessage() for r in caplog.records]
    for i in (1, 2, 3):
        assert sum(m.startswith(f"chain SFP{i} is not routed: ") for m in said) == 1
        assert said.count(f"chain SFP{i} is routed again") == 1


def test_the_fabric_view_names_the_port_chain_or_stream() -> None:
    chain = unrouted(SrfabricError("chain 9f1c/77aa", "no path from e8 to h16"))
    assert chain == {"what": "chain 9f1c/77aa", "reason": "no path from e8 to h16", "port_chain": "9f1c"}
    stream = unrouted(SrfabricError("stream cam-1", "no path"))
    assert stream == {"what": "stream cam-1", "reason": "no path", "stream": "cam-1"}
