"""A link whose LLDP stops is taken down after the configured number of LLDP rounds, on a clock the test turns
(one round a second); it comes back when LLDP sees it again. The decision core is driven by its handlers alone."""

from __future__ import annotations

from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.controller.packets import lldp_frame
from srfabric.model.fabric import Switch

SECOND = 1_000_000_000


def signed(core: ControllerCore, dpid: int, port: int) -> bytes:
    """The LLDP frame the controller sends out of ``dpid``:``port`` now."""
    return lldp_frame(dpid, port, key=core.config.lldp_key, sent_ns=core.config.lldp_clock())


def two_switches(now: list[int], missed: int = 3) -> ControllerCore:
    """Switches 1 and 2, connected, with port 1:5 cabled to 2:6 (learned from LLDP at time 0)."""
    core = ControllerCore(ControllerConfig(lldp_interval=1.0, lldp_missed=missed, clock=lambda: now[0],
                                           lldp_clock=lambda: now[0]))
    for dpid, ports in ((1, [5, 8, 9]), (2, [6])):
        core.fabric.add_switch(Switch(dpid, f"s{dpid}"))
        core.switch_ready(dpid, ports, {}, {})
    core.packet_in(2, 6, signed(core, 1, 5))
    core.packet_in(1, 5, signed(core, 2, 6))
    return core


def age(core: ControllerCore, now_ns: int) -> list[tuple[int, int]]:
    """The link ends an LLDP tick at ``now_ns`` takes down."""
    return core.links.age(now_ns, core.ports)


def rounds(core: ControllerCore, now: list[int], seconds: range) -> list[tuple[int, int]]:
    """One LLDP round at each of ``seconds`` (the clock turned to it); the link ends they took down."""
    down = []
    for second in seconds:
        now[0] = second * SECOND
        down += age(core, now[0])
    return down


def test_a_silent_link_goes_down_after_the_missed_intervals_and_comes_back() -> None:
    now = [0]
    core = two_switches(now)
    assert core.fabric.links == {(1, 5): (2, 6), (2, 6): (1, 5)}
    assert rounds(core, now, range(1, 3)) == []
    core.packet_in(2, 6, signed(core, 1, 5))  # only one direction still heard
    assert rounds(core, now, range(3, 4)) == []  # 3 rounds without LLDP on 1:5 is not more than 3 yet
    now[0] = 4 * SECOND
    effects = core.tick(now[0])  # one silent direction takes the link down, and asks for a sync at once
    assert core.fabric.links == {} and effects.sync and effects.urgent
    now[0] = 5 * SECOND
    core.packet_in(2, 6, signed(core, 1, 5))
    assert core.fabric.links == {}  # heard one way again, as before: not enough, it went silent one way
    now[0] = 6 * SECOND
    core.packet_in(1, 5, signed(core, 2, 6))
    assert core.fabric.links == {(2, 6): (1, 5), (1, 5): (2, 6)}  # both ways since: back
    assert rounds(core, now, range(7, 9)) == []


def test_links_of_unconnected_switches_and_aging_off_are_left_alone() -> None:
    now = [0]
    core = two_switches(now)
    core.switch_released(2)  # not connected: it sends no LLDP, and its links go with its connection
    assert age(core, 60 * SECOND) == []
    off = two_switches(now, missed=0)
    assert age(off, 60 * SECOND) == [] and len(off.fabric.links) == 2


def test_a_link_that_loses_its_carrier_is_suspended_and_its_ports_stay_trusted() -> None:
    now = [0]
    core = two_switches(now)
    fabric = core.fabric
    core.port_status(1, 5, deleted=False, down=True)
    assert fabric.links == {} and fabric.dormant == {(1, 5): (2, 6), (2, 6): (1, 5)}
    assert fabric.port_role(1, 5) == fabric.port_role(2, 6) == "fabric" and fabric.trusted_ports(1) == [5]
    now[0] = 10 * SECOND
    core.port_status(1, 5, deleted=False, down=False)  # carrier back: LLDP has 3 intervals to confirm
    core.packet_in(2, 6, signed(core, 1, 5))
    assert fabric.links == {(1, 5): (2, 6), (2, 6): (1, 5)} and fabric.dormant == {}
    assert rounds(core, now, range(11, 14)) == []  # 1:5's time started when the link came back
    # Carrier back without LLDP (re-cabled to a host, say): after the missed rounds, a host port again.
    core.port_status(1, 5, deleted=False, down=True)
    now[0] = 20 * SECOND
    core.port_status(1, 5, deleted=False, down=False)
    assert rounds(core, now, range(20, 24)) == []
    assert rounds(core, now, range(24, 25)) == [(1, 5)]
    assert fabric.dormant == {} and fabric.port_role(1, 5) == "host"


def test_a_deleted_port_forgets_its_link_at_once() -> None:
    core = two_switches([0])
    core.port_status(2, 6, deleted=True, down=True)
    assert core.fabric.links == {} and core.fabric.dormant == {}


def test_ports_of_a_link_gone_silent_learn_no_host_until_the_link_is_back() -> None:
    from srfabric.controller.packets import ARP_REQUEST, ArpPacket

    now = [0]
    core = two_switches(now)
    rounds(core, now, range(1, 5))  # silent both ways since 0
    assert core.fabric.links == {} and core.links.quarantine == {(1, 5), (2, 6)}
    request = ArpPacket(ARP_REQUEST, 0x0A, "10.0.0.9", 0, "10.0.0.1", 0x0A, 0xFFFFFFFFFFFF).to_bytes()
    core.packet_in(2, 6, request)  # a host's request that crossed the link
    assert core.fabric.hosts == {}
    now[0] = 5 * SECOND
    core.packet_in(2, 6, signed(core, 1, 5))
    core.packet_in(1, 5, signed(core, 2, 6))
    assert len(core.fabric.links) == 2 and core.links.quarantine == set()


def test_a_switch_that_goes_away_takes_its_suspended_links_and_function_marks() -> None:
    from srfabric.model.fabric import ServiceFunction

    now = [0]
    core = two_switches(now)
    core.fabric.add_function(ServiceFunction("fw", (1, 8), (1, 9)))
    core.port_status(1, 5, deleted=False, down=True)
    core.port_status(1, 8, deleted=False, down=True)
    assert core.fabric.dormant and core.fabric.functions_down == {"fw"}
    core.switch_gone(1)
    assert core.fabric.dormant == {} and core.fabric.functions_down == set()


def test_lldp_the_controller_did_not_sign_teaches_no_link() -> None:
    """A switch (even one whose certificate lets it connect) that sends LLDP naming another switch's port, unsigned
    or signed with another key, does not make the controller believe in a link."""
    now = [0]
    core = two_switches(now)
    core.fabric.add_switch(Switch(3, "s3"))
    core.switch_ready(3, [1], {}, {})
    links = dict(core.fabric.links)
    for forged in (lldp_frame(1, 9), lldp_frame(1, 9, key=b"another controller's key")):
        core.packet_in(3, 1, forged)
        assert (3, 1) not in core.fabric.links
    core.packet_in(3, 1, signed(core, 1, 9))  # what the controller sent out of 1:9
    assert core.fabric.links == {**links, (3, 1): (1, 9), (1, 9): (3, 1)}


def test_signed_lldp_replayed_or_stale_teaches_no_link_and_is_counted() -> None:
    """A switch that captured the controller's LLDP (signed, so it cannot forge its own) replays it: twice, or
    late. Neither teaches a link; both are counted by reason (issue 58)."""
    now = [0]
    core = two_switches(now)
    core.fabric.add_switch(Switch(3, "s3"))
    core.switch_ready(3, [1, 2], {}, {})
    links = dict(core.fabric.links)
    now[0] = SECOND
    captured = signed(core, 1, 8)
    core.packet_in(3, 1, captured)  # its first arrival: a link 1:8 - 3:1
    core.packet_in(3, 2, captured)  # the same frame again, on another port
    assert core.fabric.links == {**links, (3, 1): (1, 8), (1, 8): (3, 1)}
    now[0] = 7 * SECOND
    late = lldp_frame(1, 9, key=core.config.lldp_key, sent_ns=SECOND)  # 6 s old: past (3 + 2) intervals of 1 s
    core.packet_in(3, 2, late)
    assert (3, 2) not in core.fabric.links
    assert core.links.refused == {"replayed": 1, "stale": 1}


def test_a_controller_that_stalled_sent_no_lldp_and_takes_no_link_down_for_it() -> None:
    now = [0]
    core = two_switches(now)
    for second in range(1, 4):  # LLDP rounds each second, both directions heard
        now[0] = second * SECOND
        core.tick(now[0])
        core.packet_in(2, 6, signed(core, 1, 5))
        core.packet_in(1, 5, signed(core, 2, 6))
    now[0] = 12 * SECOND  # the loop blocked for 9 s (a long sync): no tick, so no LLDP went out meanwhile
    core.tick(now[0])
    assert core.fabric.links == {(1, 5): (2, 6), (2, 6): (1, 5)}
    for second in (13, 14, 15):  # then rounds again, and the link silent: down after the missed rounds
        now[0] = second * SECOND
        core.tick(now[0])
    assert core.fabric.links == {}


def test_a_port_whose_carrier_comes_back_is_probed_with_lldp_at_once() -> None:
    now = [0]
    core = two_switches(now)
    core.port_status(1, 5, deleted=False, down=True)
    now[0] = SECOND // 10  # a tenth of a round later: the next round is far
    effects = core.port_status(1, 5, deleted=False, down=False)
    [probe] = [send for send in effects.sends if send.dpid == 1]
    assert len(probe.messages) == 1  # one LLDP frame, out of that port only
    core.packet_in(2, 6, signed(core, 1, 5))  # the probe, arrived
    assert core.fabric.links == {(1, 5): (2, 6), (2, 6): (1, 5)}
    assert not [send for send in core.port_status(1, 8, deleted=False, down=False, live=False).sends]
    local = core.port_status(1, 0xFFFFFFFE, deleted=False, down=False)  # the bridge's own port: a host's kernel
    assert not [send for send in local.sends if send.dpid == 1]



def test_a_silent_link_heard_again_one_way_is_probed_the_other_way_at_once() -> None:
    """A link that went silent comes back only when heard both ways: the port that hears it first answers with LLDP
    at once (its far end may have come back after this port's last LLDP), instead of at the next round."""
    now = [0]
    core = two_switches(now)
    rounds(core, now, range(1, 3))
    core.packet_in(2, 6, signed(core, 1, 5))  # only one direction still heard
    rounds(core, now, range(3, 4))
    now[0] = 4 * SECOND
    core.tick(now[0])  # one direction silent for the missed rounds: down
    assert core.fabric.links == {}
    now[0] = 5 * SECOND
    effects = core.packet_in(2, 6, signed(core, 1, 5))  # heard one way again
    [probe] = [send for send in effects.sends if send.dpid == 2]
    assert len(probe.messages) == 1  # one LLDP frame, out of the port it came in on
    core.packet_in(1, 5, signed(core, 2, 6))  # the probe, arrived
    assert core.fabric.links == {(1, 5): (2, 6), (2, 6): (1, 5)}
    assert not core.packet_in(2, 6, signed(core, 1, 5)).sends  # up again: no more probes
