"""The compile cache gives what a full compile (a fresh cache) gives, and recompiles only what a change touches."""

from __future__ import annotations

from dataclasses import replace

import pytest

from srfabric.errors import SrfabricError
from srfabric.model.chain import Chain, FlowClassifier
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


def _full(fabric, chains, codec: str = "mac-nibble"):
    problems: list = []
    state = CompileCache(codec).state(fabric, chains, problems)
    return state, [str(problem) for problem in problems]


def test_chain_changes_rebuild_only_their_switches_and_give_the_full_compile() -> None:
    fabric, chains = demo_fabric(), sfp_chains(3)
    cache = CompileCache("mac-nibble")
    first = cache.state(fabric, chains, [])
    spare = Chain("spare", FlowClassifier(protocol="udp", destination_port_range=(6000, 6000)), ("v3",), "h2", "h15", 9)
    moved = Chain("spare", spare.classifier, ("v7",), "h2", "h15", 9)
    lost = Chain("lost", FlowClassifier(protocol="udp"), (), "h1", "nobody", 10)  # its destination is unknown
    twin = Chain("twin", sfp_chains(1)[0].classifier, ("v5",), "h1", "h16", 11)  # SFP1's classifier at h1
    steps = [chains + [spare], chains + [moved], chains + [moved, lost], chains + [lost], chains, chains + [twin],
             chains]
    for step in steps:
        problems: list = []
        state = cache.state(fabric, step, problems)
        assert (state, [str(problem) for problem in problems]) == _full(fabric, step)
    # Only the spare chain's switches were put together again: every other switch keeps its very list.
    again = cache.state(fabric, chains + [spare], [])
    spare_switches = {dpid for dpid, _ in cache.placements["spare"][3].entries}
    assert all(again.entries[dpid] is first.entries[dpid] for dpid in first.entries if dpid not in spare_switches)


def test_a_new_chain_is_checked_on_its_switches_as_against_the_full_tables() -> None:
    fabric, chains = demo_fabric(), sfp_chains(3)
    cache = CompileCache("mac-nibble")
    cache.state(fabric, chains, [])
    twin = Chain("twin", sfp_chains(1)[0].classifier, ("v5",), "h1", "h16", 11)
    with pytest.raises(SrfabricError) as quick:
        cache.check(fabric, chains, twin)
    with pytest.raises(SrfabricError) as full:
        CompileCache("mac-nibble").state(fabric, chains, [], checked=twin)
    assert str(quick.value) == str(full.value) and "conflicts" in str(quick.value)
    cache.check(fabric, chains, Chain("fine", FlowClassifier(protocol="udp", destination_port_range=(7000, 7000)),
                                      ("v2",), "h3", "h9", 12))
    with pytest.raises(SrfabricError, match="nobody"):
        cache.check(fabric, chains, Chain("lost", FlowClassifier(protocol="udp"), (), "h1", "nobody", 10))


def test_an_updated_chain_is_checked_on_its_switches_as_against_the_full_tables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An update (a chain held, in a new version) is checked without its last version, on the new version's
    switches: moved to another function it passes, given another chain's classifier it is refused as the full
    compile refuses it, and the full tables are not put together for either."""
    fabric, chains = demo_fabric(), sfp_chains(3)
    cache = CompileCache("mac-nibble")
    cache.state(fabric, chains, [])
    full_compiles: list[str] = []
    real_state = CompileCache.state

    def state(self, fabric, chains, problems=None, checked=None, **kwargs):  # type: ignore[no-untyped-def]
        if checked is not None:
            full_compiles.append(checked.name)
        return real_state(self, fabric, chains, problems, checked, **kwargs)

    monkeypatch.setattr(CompileCache, "state", state)
    others = chains[1:]
    moved = replace(chains[0], functions=chains[1].functions)
    cache.check(fabric, others, moved)
    clashing = replace(chains[0], classifier=chains[1].classifier)
    with pytest.raises(SrfabricError) as quick:
        cache.check(fabric, others, clashing)
    with pytest.raises(SrfabricError) as full:
        real_state(CompileCache("mac-nibble"), fabric, others, [], checked=clashing)
    assert str(quick.value) == str(full.value) and "conflicts" in str(quick.value)
    assert full_compiles == []
