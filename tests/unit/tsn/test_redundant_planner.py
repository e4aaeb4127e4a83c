"""A time-triggered redundant stream on the live planner (``tsn.redundant``): one slot and phase on both trees,
which no later stream may take on any of their links; the late copy's spill on the listener's link; removal and
undo as one piece; what does not fit is refused by name and changes nothing."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.model.topo import tsn_fig1
from srfabric.tsn.model.network import Stream
from srfabric.tsn.runtime.live import LivePlanner, Refused, network_from_fabric

FIRST = ("h1", "s1", "s2", "s5", "h3")
SECOND = ("h1", "s1", "s3", "s4", "s5", "h3")


def planner() -> LivePlanner:
    return LivePlanner(network_from_fabric(tsn_fig1().to_fabric()))


def gated(live: LivePlanner) -> dict[str, list[int]]:
    """Each gated port: the start of every window that lets the time-triggered class through."""
    ports = {}
    for gcl in live.gcls(base_time_ns=0):
        at, starts = 0, []
        for entry in gcl.entries:
            if entry.mask & (1 << gcl.tt_class):
                starts.append(at)
            at += entry.duration_ns
        ports[f"{gcl.node}>{gcl.peer}"] = starts
    return ports


def test_both_trees_are_gated_in_the_same_slot_and_no_later_stream_meets_either() -> None:
    live = planner()
    placed = live.admit_redundant(Stream("r", "h1", "h3", size_bytes=200), FIRST, SECOND)
    ports = gated(live)
    assert sorted(ports) == ["s1>s2", "s1>s3", "s2>s5", "s3>s4", "s4>s5", "s5>h3"]
    assert len({tuple(starts) for starts in ports.values()}) == 1
    for other, path in (("a", ("h2", "s1", "s3", "s4", "h4")), ("b", ("h2", "s1", "s2", "s5", "h3"))):
        assert live.admit(Stream(other, "h2", path[-1], size_bytes=200), [path]).slot != placed.slot


def test_a_frame_too_long_to_follow_the_other_copy_within_the_slot_holds_the_next_one_on_the_listeners_link() -> None:
    live = planner()
    live.admit_redundant(Stream("r", "h1", "h3", size_bytes=1500), FIRST, SECOND)
    ports = gated(live)
    assert ports["s5>h3"][0] == ports["s1>s3"][0] == 0
    windows = [gcl for gcl in live.gcls(base_time_ns=0) if gcl.peer == "h3"][0].entries
    assert windows[0].duration_ns == 2 * live.slot_ns  # slot and spill, one window
    blocked = live.admit(Stream("x", "h2", "h3", size_bytes=200), [("h2", "s1", "s2", "s5", "h3")])
    assert blocked.slot >= 2


def test_removing_frees_both_trees_and_the_undo_puts_them_back() -> None:
    live = planner()
    live.admit_redundant(Stream("r", "h1", "h3", size_bytes=1500), FIRST, SECOND)
    before = gated(live)
    put_back = live.keep("r")
    live.remove("r")
    assert gated(live) == {}
    put_back()
    assert gated(live) == before


@pytest.mark.parametrize(("stream", "second", "refusal"), [
    (Stream("r", "h1", "h3", size_bytes=200, deadline_ns=9_000), SECOND, "max_latency_ns: 9000 ns is below"),
    (Stream("r", "h1", "h3", size_bytes=200), FIRST, "second_path: is the same tree as path"),
    (Stream("r", "h1", "h3", size_bytes=200), ("h1", "s1", "s3", "s4", "s5", "s2", "s5", "h3"),
     "second_path: shares the link s5 - s2 with path"),
    (Stream("r", "h1", "h3", size_bytes=200, period_ns=3_000_000), SECOND, "period_ns: 3000000 is not one of"),
])
def test_what_cannot_be_placed_is_refused_by_name_and_changes_nothing(stream: Stream, second: tuple[str, ...],
                                                                      refusal: str) -> None:
    live = planner()
    live.admit(Stream("a", "h2", "h4", size_bytes=200))
    before = gated(live)
    with pytest.raises(ModelError) as refused:
        live.admit_redundant(stream, FIRST, second)
    assert str(refused.value).startswith(refusal)
    assert gated(live) == before and sorted(live.streams) == ["a"]


def test_a_full_tree_refuses_the_stream_and_re_solving_is_refused_while_one_is_admitted() -> None:
    live = planner()
    for slot in range(live.slots):
        live.admit(Stream(f"f{slot}", "h2", "h4", size_bytes=200), [("h2", "s1", "s3", "s4", "h4")])
    with pytest.raises(Refused, match="slot: no slot is free on both trees"):
        live.admit_redundant(Stream("r", "h1", "h3", size_bytes=200), FIRST, SECOND)
    live.remove("f0")
    live.admit_redundant(Stream("r", "h1", "h3", size_bytes=200), FIRST, SECOND)
    with pytest.raises(Refused, match="reoptimise: redundant time-triggered streams"):
        live.reoptimise()
