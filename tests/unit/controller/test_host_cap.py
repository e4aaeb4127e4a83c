"""A host port teaches at most ``max_hosts_per_port`` hosts (issue 58): ARP from more is refused, counted by port
and changes nothing, while the port's own hosts and other ports keep learning."""

from __future__ import annotations

from srfabric.controller.config import ControllerConfig
from srfabric.controller.core import ControllerCore
from srfabric.controller.packets import ARP_REQUEST, ArpPacket
from srfabric.model.fabric import Switch


def gratuitous(mac: int, ip: str) -> bytes:
    return ArpPacket(ARP_REQUEST, mac, ip, 0, ip, mac, 0xFFFFFFFFFFFF).to_bytes()


def test_a_port_past_its_cap_teaches_no_more_hosts_and_the_refusals_are_counted() -> None:
    core = ControllerCore(ControllerConfig(max_hosts_per_port=2))
    core.fabric.add_switch(Switch(1, "s1"))
    core.switch_ready(1, [1, 2], {}, {})
    for index in range(1, 6):  # a flood of made-up hosts on port 1
        core.packet_in(1, 1, gratuitous(0x020000000000 + index, f"10.0.0.{index}"))
    assert sorted(h.ip for h in core.fabric.hosts.values()) == ["10.0.0.1", "10.0.0.2"]
    assert core.hosts.refused == {(1, 1): 3}
    before = dict(core.fabric.hosts)
    core.packet_in(1, 1, gratuitous(0x0200000000AA, "10.0.0.2"))  # a host of the port takes a new MAC
    assert core.fabric.host_by_ip("10.0.0.2").mac == 0x0200000000AA and len(core.fabric.hosts) == len(before)
    core.packet_in(1, 1, gratuitous(0x020000000001, "10.0.0.7"))  # a host of the port takes another address
    assert core.fabric.host_by_ip("10.0.0.7") is not None and core.hosts.refused == {(1, 1): 3}
    core.packet_in(1, 2, gratuitous(0x020000000009, "10.0.0.9"))  # another port is not affected
    assert core.fabric.host_by_ip("10.0.0.9") is not None and core.hosts.refused == {(1, 1): 3}
