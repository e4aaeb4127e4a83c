"""A link whose LLDP stops is taken down after the configured number of intervals, on a clock the test turns;
it comes back when LLDP sees it again."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from srfabric.controller.controller import Controller, ControllerConfig
from srfabric.controller.packets import lldp_frame
from srfabric.model.fabric import Switch

SECOND = 1_000_000_000


def two_switches(now: list[int], missed: int = 3) -> tuple[Controller, dict[int, Any]]:
    """Switches 1 and 2, connected, with port 1:5 cabled to 2:6 (learned from LLDP at time 0)."""
    controller = Controller(ControllerConfig(lldp_interval=1.0, lldp_missed=missed, clock=lambda: now[0]))
    conns = {dpid: SimpleNamespace(dpid=dpid) for dpid in (1, 2)}
    for dpid in conns:
        controller.fabric.add_switch(Switch(dpid, f"s{dpid}"))
        controller.switches[dpid] = conns[dpid]  # type: ignore[assignment]
    controller._lldp_in(conns[2], 6, lldp_frame(1, 5))  # type: ignore[arg-type]
    controller._lldp_in(conns[1], 5, lldp_frame(2, 6))  # type: ignore[arg-type]
    return controller, conns


def test_a_silent_link_goes_down_after_the_missed_intervals_and_comes_back() -> None:
    now = [0]
    controller, conns = two_switches(now)
    assert controller.fabric.links == {(1, 5): (2, 6), (2, 6): (1, 5)}
    now[0] = 2 * SECOND
    controller._lldp_in(conns[2], 6, lldp_frame(1, 5))  # type: ignore[arg-type]  # only one direction still heard
    now[0] = 3 * SECOND
    assert controller.age_links(now[0]) == []  # 3 s without LLDP on 1:5 is not more than 3 intervals yet
    controller._dirty.clear()
    now[0] = 3 * SECOND + 1
    assert controller.age_links(now[0]) == [(1, 5)]  # one silent direction takes the link down
    assert controller.fabric.links == {} and controller._dirty.is_set()
    now[0] = 4 * SECOND
    controller._lldp_in(conns[2], 6, lldp_frame(1, 5))  # type: ignore[arg-type]
    assert controller.fabric.links == {}  # heard one way again, as before: not enough, it went silent one way
    now[0] = 5 * SECOND
    controller._lldp_in(conns[1], 5, lldp_frame(2, 6))  # type: ignore[arg-type]
    assert controller.fabric.links == {(2, 6): (1, 5), (1, 5): (2, 6)}  # both ways since: back
    assert controller.age_links(now[0] + 2 * SECOND) == []


def test_links_of_unconnected_switches_and_aging_off_are_left_alone() -> None:
    now = [0]
    controller, _ = two_switches(now)
    del controller.switches[2]
    assert controller.age_links(60 * SECOND) == []
    off, _ = two_switches(now, missed=0)
    assert off.age_links(60 * SECOND) == [] and len(off.fabric.links) == 2


def test_a_link_that_loses_its_carrier_is_suspended_and_its_ports_stay_trusted() -> None:
    now = [0]
    controller, conns = two_switches(now)
    fabric = controller.fabric
    controller._port_status(1, 5, deleted=False, down=True)
    assert fabric.links == {} and fabric.dormant == {(1, 5): (2, 6), (2, 6): (1, 5)}
    assert fabric.port_role(1, 5) == fabric.port_role(2, 6) == "fabric" and fabric.trusted_ports(1) == [5]
    now[0] = 10 * SECOND
    controller._port_status(1, 5, deleted=False, down=False)  # carrier back: LLDP has 3 intervals to confirm
    controller._lldp_in(conns[2], 6, lldp_frame(1, 5))  # type: ignore[arg-type]
    assert fabric.links == {(1, 5): (2, 6), (2, 6): (1, 5)} and fabric.dormant == {}
    assert controller.age_links(now[0] + 2 * SECOND) == []  # 1:5's time started when the link came back
    # Carrier back without LLDP (re-cabled to a host, say): after the missed intervals, a host port again.
    controller._port_status(1, 5, deleted=False, down=True)
    now[0] = 20 * SECOND
    controller._port_status(1, 5, deleted=False, down=False)
    assert controller.age_links(now[0] + 3 * SECOND) == []
    assert controller.age_links(now[0] + 3 * SECOND + 1) == [(1, 5)]
    assert fabric.dormant == {} and fabric.port_role(1, 5) == "host"


def test_a_deleted_port_forgets_its_link_at_once() -> None:
    controller, _ = two_switches([0])
    controller._port_status(2, 6, deleted=True, down=True)
    assert controller.fabric.links == {} and controller.fabric.dormant == {}


def test_ports_of_a_link_gone_silent_learn_no_host_until_the_link_is_back() -> None:
    from srfabric.controller.packets import ARP_REQUEST, ArpPacket

    now = [0]
    controller, conns = two_switches(now)
    controller.age_links(4 * SECOND)  # silent both ways since 0
    assert controller.fabric.links == {} and controller._quarantine == {(1, 5), (2, 6)}
    request = ArpPacket(ARP_REQUEST, 0x0A, "10.0.0.9", 0, "10.0.0.1", 0x0A, 0xFFFFFFFFFFFF).to_bytes()
    controller._arp_in(conns[2], 6, request)  # type: ignore[arg-type]  # a host's request that crossed the link
    assert controller.fabric.hosts == {}
    now[0] = 5 * SECOND
    controller._lldp_in(conns[2], 6, lldp_frame(1, 5))  # type: ignore[arg-type]
    controller._lldp_in(conns[1], 5, lldp_frame(2, 6))  # type: ignore[arg-type]
    assert len(controller.fabric.links) == 2 and controller._quarantine == set()


def test_a_switch_that_goes_away_takes_its_suspended_links_and_function_marks() -> None:
    import asyncio

    from srfabric.model.fabric import ServiceFunction

    now = [0]
    controller, conns = two_switches(now)
    controller.fabric.add_function(ServiceFunction("fw", (1, 8), (1, 9)))
    controller._port_status(1, 5, deleted=False, down=True)
    controller._port_status(1, 8, deleted=False, down=True)
    assert controller.fabric.dormant and controller.fabric.functions_down == {"fw"}
    asyncio.run(controller._on_gone(conns[1]))  # type: ignore[arg-type]
    assert controller.fabric.dormant == {} and controller.fabric.functions_down == set()
