"""A connection that is not the taken switch of the dpid it claims (not admitted yet, or refused) speaks for
nobody: its port-down for a fabric link leaves the link in place, while the same report from the taken
connection takes it down."""

from __future__ import annotations

import asyncio

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.controller.controller import Controller
from srfabric.model.fabric import Switch
from srfabric.southbound.channel import SwitchConnection


class Writer:
    def write(self, data: bytes) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def port_down(port: int) -> parser.OFPPortStatus:
    desc = parser.OFPPort(port_no=port, hw_addr="00:00:00:00:00:01", name=b"s1-eth1", config=0,
                          state=ofp.OFPPS_LINK_DOWN, curr=0, advertised=0, supported=0, peer=0, curr_speed=0,
                          max_speed=0)
    return parser.OFPPortStatus(None, ofp.OFPPR_MODIFY, desc)


def test_an_impostor_s_port_down_changes_nothing() -> None:
    async def scenario() -> tuple[bool, bool]:
        controller = Controller()
        for dpid in (1, 2):
            controller.fabric.add_switch(Switch(dpid, f"s{dpid}"))
        controller.fabric.add_link((1, 1), (2, 1))
        controller.fabric.add_link((2, 1), (1, 1))
        taken, impostor = (SwitchConnection(asyncio.StreamReader(), Writer()) for _ in range(2))  # type: ignore[arg-type]
        taken.dpid = impostor.dpid = 1
        controller.switches[1] = taken
        controller.core.taken.add(1)  # MASTER of it
        await controller.channels.on_message(impostor, port_down(1))
        after_impostor = (1, 1) in controller.fabric.links
        await controller.channels.on_message(taken, port_down(1))
        return after_impostor, (1, 1) in controller.fabric.links

    assert asyncio.run(scenario()) == (True, False)
