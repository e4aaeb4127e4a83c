"""The compile cache gives what a full compile (a fresh cache) gives, and recompiles only what a change touches."""

from __future__ import annotations

import pytest

from srfabric.model.fabric import Host, ServiceFunction
from srfabric.rules import compile as compile_engine
from srfabric.rules.compile import CompileCache, compile_state
from tests.unit.rules.test_rules_walk import demo_fabric, sfp_chains


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the chains the cache placed, in order."""
    placed: list[str] = []
    real = compile_engine.chain_placement

    def counting(fabric, chain, codec, sre=None):
        placed.append(chain.name)
        return real(fabric, chain, codec, sre)

    monkeypatch.setattr(compile_engine, "chain_placement", counting)
    return placed


@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_each_change_gives_the_full_compile(codec: str, counted: list[str]) -> None:
    fabric, chains = demo_fabric(), sfp_chains(3)
    cache = CompileCache(codec)
    full = compile_state(fabric, chains, codec)
    counted.clear()  # the full compile places every chain on a fresh cache: count the kept cache's only
    assert cache.state(fabric, chains) == full
    assert sorted(counted) == ["SFP1", "SFP2", "SFP3"]
    edge = fabric.hosts["h1"].dpid
    changes = [
        lambda: fabric.add_function(ServiceFunction("spare", (edge, 14), (edge, 15))),
        lambda: fabric.remove_function("spare"),
        lambda: fabric.add_host(Host("h99", 0x99, "10.9.9.9", edge, 13)),
        lambda: fabric.remove_host("h99"),
    ]
    for change in changes:
        counted.clear()
        change()
        assert cache.state(fabric, chains) == compile_state(fabric, chains, codec)
    # Functions no chain crosses recompile no chain; a host (the topology) recompiles every chain.
    counted.clear()
    fabric.add_function(ServiceFunction("spare", (edge, 14), (edge, 15)))
    cache.state(fabric, chains)
    assert counted == []
    fabric.add_host(Host("h98", 0x98, "10.9.9.8", edge, 13))
    cache.state(fabric, chains)
    assert sorted(counted) == ["SFP1", "SFP2", "SFP3"]


def test_a_changed_function_recompiles_the_chains_that_cross_it(counted: list[str]) -> None:
    fabric, chains = demo_fabric(), sfp_chains(3)
    cache = CompileCache("mac-nibble")
    cache.state(fabric, chains)
    crossing = sorted(chain.name for chain in chains if "v1" in chain.functions)
    assert crossing and len(crossing) < len(chains)
    counted.clear()
    old = fabric.functions["v1"]
    fabric.add_function(ServiceFunction("v1", old.egress, old.ingress))  # the same ports, turned round
    full = compile_state(fabric, chains, "mac-nibble")
    counted.clear()
    assert cache.state(fabric, chains) == full
    assert sorted(counted) == crossing


def test_switches_a_change_does_not_touch_keep_their_sorted_lists() -> None:
    fabric, chains = demo_fabric(), sfp_chains(1)
    cache = CompileCache("mac-nibble")
    before = cache.state(fabric, chains).entries
    edge = fabric.hosts["h1"].dpid
    fabric.add_function(ServiceFunction("spare", (edge, 14), (edge, 15)))
    after = cache.state(fabric, chains)
    assert after == compile_state(fabric, chains, "mac-nibble")
    assert after.entries[edge] is not before[edge]
    assert all(after.entries[dpid] is before[dpid] for dpid in before if dpid != edge)
