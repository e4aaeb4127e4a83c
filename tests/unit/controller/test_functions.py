"""Declaring service functions: only a change asks for a sync."""

from __future__ import annotations

from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.model.fabric import ServiceFunction, Switch


def test_declaring_a_known_function_again_asks_for_no_sync() -> None:
    core = ControllerCore(ControllerConfig())
    core.fabric.add_switch(Switch(1, "s1"))
    assert core.add_function(ServiceFunction("fw", (1, 3), (1, 4))).sync
    assert not core.add_function(ServiceFunction("fw", (1, 3), (1, 4))).sync  # the API declares every function
    assert core.add_function(ServiceFunction("fw", (1, 3), (1, 5))).sync
    assert not core.remove_function("gone").sync
    assert core.remove_function("fw").sync
