"""SR classes under the credit-based shaper (``tsn.protect.cbs_*``): the bound at one port holds for a frame-by-frame
run of the shaper beside time-triggered windows, and admission refuses with the failure code that fits."""

from __future__ import annotations

import random

import pytest

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Network
from srfabric.tsn.protect.cbs_admission import admit
from srfabric.tsn.protect.cbs_bound import analyse
from srfabric.tsn.protect.cbs_classes import (
    FRAME_TOO_LARGE,
    INSUFFICIENT_CLASS_BANDWIDTH,
    LATENCY_CHANGED,
    MAX_LATENCY_EXCEEDED,
    NOT_AN_SR_CLASS,
    ClassStream,
    PortWindows,
    Refusal,
    wire_bits,
)
from tests.unit.tsn.cbs_port_sim import Port, periodic, worst_delays

LINE = Network.build([("h1", "host"), ("s1", "switch"), ("s2", "switch"), ("h2", "host"), ("h3", "host")],
                     [("h1", "s1"), ("s1", "s2"), ("s2", "h2"), ("s2", "h3")])
ROUTE = ("h1", "s1", "s2", "h2")
PORT = ("h1", "s1")  # the talker's port: its frames arrive as they are sent, one per interval


def class_streams(rng: random.Random) -> list[ClassStream]:
    streams = []
    for index in range(rng.randint(1, 6)):
        streams.append(ClassStream(f"f{index}", rng.choice("AB"), ROUTE, rng.choice((125_000, 250_000, 500_000)),
                                   rng.randint(64, 1200)))
    return streams


@pytest.mark.parametrize("seed", range(16))
def test_no_frame_at_the_port_waits_longer_than_the_bound(seed: int) -> None:
    """Half the draws line every stream's first frame up at 0; windows in all but every fourth, and the shaper
    earns credit while a frame waits for a window in half of them (802.1Q leaves it to the bridge)."""
    rng = random.Random(seed)
    streams = class_streams(rng)
    cycle = 500_000
    windows = {PORT: PortWindows(cycle, rng.choice((20_000, 60_000)), 1)} if seed % 4 else {}
    try:
        analysis = analyse(LINE, streams, windows)
    except Refusal:
        pytest.skip("this draw does not fit the port")
    share = analysis.ports[PORT]
    placed = windows.get(PORT)
    opening = rng.uniform(0, cycle - (placed.closed_ns if placed else 0))
    port = Port(share.rate_bps, share.idle_slope_bps, wire_bits(1500), cycle,
                [(opening, opening + placed.closed_ns)] if placed else [], credit_while_held=seed % 2 == 0)
    horizon = 20_000_000.0
    lined_up = seed < 8
    arrivals = periodic([(s.sr_class, s.wire_bits, float(s.interval_ns),
                          0.0 if lined_up else rng.uniform(0, s.interval_ns)) for s in streams], horizon)
    seen = worst_delays(port, arrivals, horizon)
    for cls in ("A", "B"):
        assert seen[cls] <= share.delay_ns[cls] + 1e-6, (cls, seen, share.delay_ns)


def test_windows_lengthen_a_bound_and_class_a_lengthens_class_bs() -> None:
    a, b = ClassStream("a", "A", ROUTE, 125_000, 200), ClassStream("b", "B", ROUTE, 250_000, 600)
    alone = analyse(LINE, [a]).bound_ns["a"]
    assert analyse(LINE, [a], {PORT: PortWindows(500_000, 100_000, 2)}).bound_ns["a"] > alone
    heavier_a = ClassStream("a", "A", ROUTE, 125_000, 1200)
    assert analyse(LINE, [heavier_a, b]).bound_ns["b"] > analyse(LINE, [a, b]).bound_ns["b"]


def test_refusals_carry_the_failure_code_that_fits() -> None:
    first = ClassStream("a", "A", ROUTE, 125_000, 200, max_latency_ns=800_000)
    cases = [
        (lambda: ClassStream("x", "D", ROUTE, 125_000, 200), NOT_AN_SR_CLASS, "priority"),
        (lambda: ClassStream("x", "A", ROUTE, 125_000, 9000), FRAME_TOO_LARGE, "size_bytes"),
        (lambda: admit(LINE, [first], ClassStream("x", "B", ROUTE, 15_000, 1500)), INSUFFICIENT_CLASS_BANDWIDTH,
         "path"),
        (lambda: admit(LINE, [], ClassStream("x", "A", ROUTE, 125_000, 200, max_latency_ns=100_000)),
         MAX_LATENCY_EXCEEDED, "max_latency_ns"),
        (lambda: admit(LINE, [first], ClassStream("x", "A", ROUTE, 125_000, 1200)), LATENCY_CHANGED, "path"),
        (lambda: admit(LINE, [], ClassStream("x", "A", ROUTE, 125_000, 200),
                       {PORT: PortWindows(100_000, 99_000, 1)}), INSUFFICIENT_CLASS_BANDWIDTH, "path"),
    ]
    for make, code, field in cases:
        with pytest.raises(Refusal) as refused:
            make()
        assert (refused.value.code, refused.value.field) == (code, field), refused.value


def test_a_route_off_the_network_is_named() -> None:
    with pytest.raises(ModelError, match=r"streams\[x\]\.route\[1\]: s1 and h2 are not linked"):
        analyse(LINE, [ClassStream("x", "A", ("h1", "s1", "h2"), 125_000, 200)])
