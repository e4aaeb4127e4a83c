"""A fabric link that loses its carrier changes only edge switches' entries (the new headers); transit
switches, the two at the link's ends included, keep every entry, as their decoding depends on no path."""

from __future__ import annotations

import pytest

from srfabric.rules import compile as compile_engine
from srfabric.rules.compile import CompileCache, compile_state
from tests.unit.rules.test_rules_walk import demo_fabric, sfp_chains


def changed_entries(before: dict[int, list], after: dict[int, list]) -> dict[int, int]:
    """Per switch: entries deleted plus entries added or changed."""
    out = {}
    for dpid in before.keys() | after.keys():
        old = {entry.key: entry for entry in before.get(dpid, [])}
        new = {entry.key: entry for entry in after.get(dpid, [])}
        count = len(old.keys() - new.keys()) + sum(old.get(key) != entry for key, entry in new.items())
        if count:
            out[dpid] = count
    return out


@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_a_cut_link_changes_edge_switches_only(codec: str) -> None:
    fabric, chains = demo_fabric(), sfp_chains(3)
    before = compile_state(fabric, chains, codec).entries
    roles = {dpid: switch.role for dpid, switch in fabric.switches.items()}
    cuts = [end for end, peer in fabric.links.items() if roles[end[0]] != "edge" and roles[peer[0]] != "edge"]
    assert len(cuts) == 32  # every aggregation-core link, from both ends
    repaired = 0
    for end in cuts:
        fabric = demo_fabric()
        fabric.suspend_link(end)
        changed = changed_entries(before, compile_state(fabric, chains, codec).entries)
        assert {roles[dpid] for dpid in changed} <= {"edge"}, (end, changed)
        repaired += bool(changed)
    assert repaired > 0  # some cut links carried the chains: their edges got new headers


@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_a_cut_link_re_places_only_the_chains_that_crossed_it(codec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    placed: list[str] = []
    real = compile_engine.chain_placement

    def counting(fabric, chain, codec, sre=None):  # type: ignore[no-untyped-def]
        placed.append(chain.name)
        return real(fabric, chain, codec, sre)

    monkeypatch.setattr(compile_engine, "chain_placement", counting)
    roles = {dpid: switch.role for dpid, switch in demo_fabric().switches.items()}
    chains = sfp_chains(3)
    crossed = 0
    for end in [end for end, peer in demo_fabric().links.items() if roles[end[0]] != "edge" != roles[peer[0]]]:
        fabric, cache = demo_fabric(), CompileCache(codec)
        cache.state(fabric, chains)
        crossing = {name for name, kept in cache.placements.items()
                    if end in kept[3].links or fabric.links[end] in kept[3].links}
        placed.clear()
        fabric.suspend_link(end)
        state = cache.state(fabric, chains)
        assert set(placed) == crossing, end  # the others keep their placement: their links are all up
        crossed += bool(crossing)
        assert state == compile_state(fabric, chains, codec)  # and it is what a full compile gives
        fabric.add_link(end, fabric.dormant[end])  # a link added may shorten any route: all are placed again
        full = compile_state(fabric, chains, codec)
        placed.clear()  # the full compile places every chain on a fresh cache: count the kept cache's only
        assert cache.state(fabric, chains) == full
        assert sorted(placed) == ["SFP1", "SFP2", "SFP3"]
    assert 0 < crossed < 32
