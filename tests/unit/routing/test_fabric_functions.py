"""A service function declared again unchanged (the API declares every function on every change) is taken as it
is, yet a port that has since become a fabric link is still refused."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.model.fabric import Fabric, ServiceFunction, Switch


def test_a_known_function_is_taken_again_unless_its_port_became_a_link() -> None:
    fabric = Fabric()
    fabric.add_switch(Switch(1, "s1"))
    fabric.add_switch(Switch(2, "s2"))
    fn = ServiceFunction("fw", (1, 3), (1, 4))
    fabric.add_function(fn)
    version = fabric.version
    fabric.add_function(ServiceFunction("fw", (1, 3), (1, 4)))
    assert fabric.version == version and fabric.functions["fw"] == fn
    fabric.add_link((1, 4), (2, 1))
    with pytest.raises(ModelError, match="fw.egress"):
        fabric.add_function(fn)
    with pytest.raises(ModelError, match="correlation"):  # a changed function is checked in full
        fabric.add_function(ServiceFunction("proxy", (1, 3), (1, 5), proxy=True))
