"""``bench capacity-ovs``'s arithmetic: setup times joined from port captures, capacities and ratios per
repetition, and the goal judged on the ratios' lower quartile."""

from __future__ import annotations

from srfabric.model.topo import tree
from srfabric.xdp.frames import udp_frame
from srfabric_tools.bench.capacity_ovs import PEER, OvsStep, setup_times_ms
from srfabric_tools.bench.capacity_ovs_report import summarise
from srfabric_tools.bench.dataplane_setup import PACKET_OUTGOING

SPEC = tree(3, 2)
H1, H8 = SPEC.hosts["h1"], SPEC.hosts["h8"]


def frame(sport: int, dport: int = 6000) -> bytes:
    return udp_frame(H8.mac, 0x020000000001, H1.ip, H8.ip, sport, dport)


def test_a_flow_is_timed_from_its_source_port_to_its_destination_port_only() -> None:
    source, destination = (H1.switch, H1.port), (H8.switch, H8.port)
    frames = {
        source: [(0, 1_000_000, frame(20000)), (0, 2_000_000, frame(20001))],
        destination: [(PACKET_OUTGOING, 4_500_000, frame(20000)),
                      (PACKET_OUTGOING, 9_000_000, frame(20001, dport=6001))],  # another step's port: not joined
        ("s3", H1.port + 1): [(PACKET_OUTGOING, 1_200_000, frame(20001))],  # flooded elsewhere: not its arrival
    }
    times = setup_times_ms(frames, SPEC, {(H1.ip, 20000): "h8", (H1.ip, 20001): "h8"}, 6000)
    assert times == [3.5]  # the second flow never left on its destination's port: not set up


def step(contender: str, offered: float, p99: float, repeat: int = 0) -> OvsStep:
    sent = int(offered)
    return OvsStep(repeat, contender, offered, 1.0, sent, sent, p99 / 2, p99, p99)


def test_ratios_come_from_each_repetitions_own_capacities_and_the_goal_from_their_lower_quartile() -> None:
    steps = []
    for repeat in range(5):
        top = 400.0 if repeat < 4 else 100.0  # one slow repetition pulls the lower quartile, not the median
        steps += [step("source-routing", 50.0, 1.0, repeat), step("source-routing", top, 2.0, repeat),
                  step("source-routing", 2 * top, 9.0, repeat),
                  step("hop-by-hop", 50.0, 2.0, repeat), step("hop-by-hop", 100.0, 7.0, repeat),
                  step(PEER, 50.0, 4.0, repeat), step(PEER, 100.0, 30.0, repeat)]
    summary = summarise(steps, False, {"cpus": 2}, 4.0)
    assert summary["capacity_flows_per_s"]["source-routing"]["runs"] == [400.0] * 4 + [100.0]
    over_peer = summary["ratios"][f"source-routing over {PEER}"]
    assert over_peer["runs"] == [8.0] * 4 + [2.0] and over_peer["median"] == 8.0
    assert summary["capacity_flows_per_s_p99_under_50_ms"][PEER]["median"] == 100.0
    goal = summary["goals"]["over_os_ken_on_ovs"]
    assert goal["ratio"] == 8.0 and goal["lower_quartile"] == 8.0 and goal["met"] is True


def test_a_peer_that_held_no_rate_gives_a_lower_bound_named_as_one() -> None:
    steps = [step("source-routing", 10.0, 1.0), step("source-routing", 100.0, 2.0), step(PEER, 10.0, 6.0)]
    summary = summarise(steps, True, {"cpus": 2}, 1.0)
    over_peer = summary["ratios"][f"source-routing over {PEER}"]
    assert over_peer["runs"] == [10.0] and over_peer["lower_bounds"] == 1
    assert summary["goals"]["over_os_ken_on_ovs"]["met"] is False  # one repetition judges nothing
