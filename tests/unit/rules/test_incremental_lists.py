"""After any run of changes (chains added, moved and removed, links cut), the kept cache's tables are the full
compile's, and what each switch's list says came and went since the last one is what comparing the two finds."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from srfabric.errors import SrfabricError
from srfabric.model.chain import Chain
from srfabric.rules.compile import CompileCache, compile_state
from srfabric.rules.entries import FlowEntry
from srfabric.rules.tables import came_and_went
from tests.unit.rules.test_rules_walk import demo_fabric, sfp_chains

CODEC = "mac-vlan-mpls"


def changed(before: list[FlowEntry], after: list[FlowEntry]) -> tuple[list[int], list[int]]:
    went, came = came_and_went(before, after)
    return [id(e) for e in went], [id(e) for e in came]


@pytest.mark.parametrize("seed", range(8))
def test_changes_and_cuts_give_the_full_compile_and_say_what_changed(seed: int) -> None:
    rng = random.Random(seed)
    fabric = demo_fabric()
    chains = {chain.name: chain for chain in sfp_chains(6)}
    cache = CompileCache(CODEC)
    last = cache.state(fabric, list(chains.values()), []).entries
    for step in range(12):
        what = rng.choice(["cut", "add", "move", "remove"])
        if what == "cut" and len(fabric.links) > 40:
            fabric.suspend_link(rng.choice(sorted(fabric.links)))
        elif what == "add":
            model = rng.choice(sfp_chains(6))
            name = f"extra{step}"
            chains[name] = Chain(name, replace(model.classifier, destination_port_range=(6000 + step, 6000 + step)),
                                 model.functions, model.source, model.destination, 100 + step)
        elif what == "move" and chains:
            name = rng.choice(sorted(chains))
            other = rng.choice(sfp_chains(6))
            chains[name] = replace(chains[name], functions=other.functions)
        elif what == "remove" and chains:
            del chains[rng.choice(sorted(chains))]
        problems: list[SrfabricError] = []
        state = cache.state(fabric, list(chains.values()), problems)
        fresh: list[SrfabricError] = []
        assert state == compile_state(fabric, list(chains.values()), CODEC, fresh)
        assert [str(p) for p in problems] == [str(p) for p in fresh]
        for dpid, entries in state.entries.items():
            if dpid in last:
                assert changed(last[dpid], entries) == changed(last[dpid], list(entries)), (step, what, dpid)
        last = state.entries
