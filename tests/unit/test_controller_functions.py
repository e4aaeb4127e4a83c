"""Declaring service functions: only a change wakes the controller's sync loop."""

from __future__ import annotations

from srfabric.controller.controller import Controller
from srfabric.model.fabric import ServiceFunction, Switch


def test_declaring_a_known_function_again_asks_for_no_sync() -> None:
    controller = Controller()
    controller.fabric.add_switch(Switch(1, "s1"))
    function = ServiceFunction("fw", (1, 3), (1, 4))
    controller.add_function(function)
    assert controller._dirty.is_set()
    controller._dirty.clear()
    controller.add_function(ServiceFunction("fw", (1, 3), (1, 4)))  # the API declares every function per change
    assert not controller._dirty.is_set()
    controller.add_function(ServiceFunction("fw", (1, 3), (1, 5)))
    assert controller._dirty.is_set()
    controller._dirty.clear()
    controller.remove_function("gone")
    assert not controller._dirty.is_set()
    controller.remove_function("fw")
    assert controller._dirty.is_set()
