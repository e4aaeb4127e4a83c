"""Reactive setup through the decision core, FakeOFTable-style: the messages it returns are encoded, parsed back
and applied to fake switches, and frames walk them. A new flow's first packet reaches the controller and the
flow is delivered after; an entry the switch let go is forgotten and not put back; a lost link drops exactly
the flows whose routes crossed it."""

from __future__ import annotations

import ipaddress

import pytest

from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.model.fabric import Fabric
from srfabric.model.topo import fat_tree
from srfabric.xdp.frames import udp_frame
from srfabric_tools.simulate import Packet
from tests.unit.controller.fake_switches import FakeSwitches, connected

STEERINGS = ["source-routing", "hop-by-hop"]


def packet(fabric: Fabric, src: str, dst: str, sport: int) -> Packet:
    s, d = fabric.hosts[src], fabric.hosts[dst]
    return Packet(eth_src=s.mac, eth_dst=d.mac, ipv4_src=int(ipaddress.IPv4Address(s.ip)),
                  ipv4_dst=int(ipaddress.IPv4Address(d.ip)), ip_proto=17, tp_src=sport, tp_dst=5009)


def reactive(steering: str, codec: str = "mac-nibble", idle: int = 60) -> tuple[ControllerCore, FakeSwitches]:
    """A fat tree whose switches hold what reactive setup starts from (no default routes)."""
    core = ControllerCore(ControllerConfig(codec=codec, steering=steering, reactive=True, flow_idle_timeout=idle))
    core.fabric = fat_tree(4).to_fabric()
    switches = FakeSwitches()
    connected(core, switches, {dpid: [] for dpid in core.fabric.switches})
    switches.sync(core)
    return core, switches


def packet_in(core: ControllerCore, switches: FakeSwitches, src: str, dst: str, sport: int) -> list[bytes]:
    """``src``'s first frame of the flow reaches the controller; what its setup sends is applied (every barrier
    answered). The frames sent on out of switch ports."""
    s, d = core.fabric.hosts[src], core.fabric.hosts[dst]
    frame = udp_frame(d.mac, s.mac, s.ip, d.ip, sport, 5009)
    new = core.new_flow(s.dpid, s.port, frame, 0, 32 + len(frame))
    switches.send(new.later)
    first = core.reactive.first_packet(new)
    assert first is not None
    switches.apply(new.dpid, first)
    return [out for _, _, out in switches.frames[-1:]]


@pytest.mark.parametrize("steering", STEERINGS)
@pytest.mark.parametrize("codec", ["mac-nibble", "mac-vlan-mpls"])
def test_a_new_flows_first_packet_goes_to_the_controller_and_then_the_flow_is_delivered(steering: str,
                                                                                      codec: str) -> None:
    core, switches = reactive(steering, codec)
    fabric = core.fabric
    sent = packet(fabric, "h1", "h16", 4000)
    first = switches.walk(fabric, sent, "h1")
    assert first.to_controller == [fabric.hosts["h1"].dpid] and not first.delivered
    assert packet_in(core, switches, "h1", "h16", 4000)  # the first packet itself goes on
    done = switches.walk(fabric, packet(fabric, "h1", "h16", 4000), "h1")
    assert done.delivered == [("h16", sent)] and not done.to_controller
    assert switches.walk(fabric, packet(fabric, "h1", "h16", 4001), "h1").to_controller, "another flow: its own"
    assert switches.sync(core) == [], "a sync keeps the reactive entries"


def test_an_entry_the_switch_let_go_is_forgotten_and_not_put_back() -> None:
    core, switches = reactive("source-routing", idle=5)
    fabric = core.fabric
    ingress = fabric.hosts["h1"].dpid
    packet_in(core, switches, "h1", "h16", 4000)
    ((key, entry),) = [(k, e) for k, e in switches.tables[ingress].items() if e.idle_timeout]
    assert entry.idle_timeout == 5
    cookie = next(c for d, k, c in installed(core) if (d, k) == (ingress, key))
    core.flow_removed(ingress, *key, cookie ^ 1)  # another entry's removal changes nothing
    assert switches.sync(core) == []
    assert switches.walk(fabric, packet(fabric, "h1", "h16", 4000), "h1").delivered
    del switches.tables[ingress][key]  # the switch lets it go, and says so
    core.flow_removed(ingress, *key, cookie)
    switches.sync(core)
    assert key not in switches.tables[ingress], "no sync puts it back"
    assert switches.walk(fabric, packet(fabric, "h1", "h16", 4000), "h1").to_controller == [ingress]


def installed(core: ControllerCore) -> list[tuple[int, tuple, int]]:  # type: ignore[type-arg]
    return [(dpid, key, cookie) for dpid, held in core.reconciler.installed.items() for key, cookie in held.items()]


def test_a_lost_link_drops_the_reactive_flows_that_crossed_it_and_only_those() -> None:
    core, switches = reactive("hop-by-hop")
    fabric = core.fabric
    flows = [("h1", "h16", 4000), ("h1", "h2", 4001), ("h5", "h16", 4002)]
    paths = {}
    for src, dst, sport in flows:
        packet_in(core, switches, src, dst, sport)
        walked = switches.walk(fabric, packet(fabric, src, dst, sport), src)
        assert walked.delivered
        paths[(src, dst)] = list(zip(walked.switches, walked.switches[1:], strict=False))
    others = {hop for pair, hops in paths.items() if pair != ("h1", "h16") for hop in hops}
    a, b = next(hop for hop in paths[("h1", "h16")] if hop not in others and hop[::-1] not in others)
    end = next(end for end, peer in fabric.links.items() if end[0] == a and peer[0] == b)
    far = fabric.links[end]
    effects = core.port_status(*end, deleted=False, down=True)
    assert effects.urgent
    switches.sync(core)
    assert switches.walk(fabric, packet(fabric, "h1", "h16", 4000), "h1").to_controller  # set up again
    for src, dst, sport in flows[1:]:
        assert switches.walk(fabric, packet(fabric, src, dst, sport), src).delivered  # untouched
    # The index from links back to entries holds what is left and nothing of what was dropped.
    reactive_flows = core.reactive
    assert not reactive_flows.on_link.get(end) and not reactive_flows.on_link.get(far)
    assert {entry for users in reactive_flows.on_link.values() for entry in users} == {
        entry for entry, links in reactive_flows.links.items() if links}  # (a flow within one switch crosses none)
