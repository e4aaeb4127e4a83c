"""The failover benchmark's pure parts: which links carry chains, the outage from receive times, and the
functions' order check."""

from __future__ import annotations

from srfabric_tools.bench.failover import PERIOD_NS, carrying_links, hops_in_order, outage
from srfabric_tools.demo import demo_chains, demo_topology


def test_links_that_carry_chains_come_most_crossed_first_core_links_before_others() -> None:
    spec, source, destination = demo_topology(4)
    found = carrying_links(spec, spec.to_fabric(), demo_chains(source, destination))
    counts = [count for _, count in found]
    assert counts == sorted(counts, reverse=True) and counts[0] == 3
    first = found[0][0]
    assert "core" in (spec.switches[first.a].role, spec.switches[first.b].role)


def test_outage_is_the_longest_gap_less_the_spacing_and_lost_frames_are_counted() -> None:
    cut = 10 * PERIOD_NS
    received = [(seq, seq * PERIOD_NS) for seq in range(20) if not 11 <= seq <= 14]  # frames 11-14 lost
    gap_ms, lost = outage(received, cut)
    assert gap_ms == round(4 * PERIOD_NS / 1e6, 3) and lost == 4
    assert outage([(seq, seq * PERIOD_NS) for seq in range(20)], cut) == (0.0, 0)
    assert outage([(seq, seq * PERIOD_NS) for seq in range(9)], cut) == (None, 0)  # nothing after the cut
    long = [(seq, seq * PERIOD_NS) for seq in range(3000) if not 10 < seq < 1600]  # 1.59 s without a frame
    assert outage(long, cut) == (1589.0, 1589)


def test_order_needs_every_delivered_frame_from_the_function_before() -> None:
    spec, source, destination = demo_topology(4)
    chains = demo_chains(source, destination)[:1]  # SFP1: v1, v4, v7
    marks = {name: index for index, name in enumerate(spec.functions, start=1)}

    def stats(counts: dict[str, int]) -> dict[str, dict[str, object]]:
        previous = {"v1": 0, "v4": marks["v1"], "v7": marks["v4"]}
        return {name: {"flows": {"forward": {"udp:5001": {f"from_mark_{previous[name]}": n}}}}
                for name, n in counts.items()}

    before = stats({"v1": 10, "v4": 10, "v7": 10})
    assert hops_in_order(before, stats({"v1": 110, "v4": 110, "v7": 110}), chains, marks,
                         {"SFP1": 100}) == {"SFP1": True}
    assert hops_in_order(before, stats({"v1": 110, "v4": 60, "v7": 110}), chains, marks,
                         {"SFP1": 100}) == {"SFP1": False}
