"""A switch's error report names the message it refused, among the last ``RECENT`` sent."""

from __future__ import annotations

import asyncio

from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.rules.entries import FlowEntry, Output, match
from srfabric.rules.openflow.ofbind import PROTOCOL
from srfabric.rules.openflow.wire import flow_add_packed
from srfabric.southbound.channel import RECENT, SwitchConnection


class Writer:
    def __init__(self) -> None:
        self.written = bytearray()

    def write(self, data: bytes) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return False


def test_an_error_names_the_refused_flow_mod_until_it_is_too_old() -> None:
    async def run() -> list[tuple[int, str]]:
        conn = SwitchConnection(None, Writer())  # type: ignore[arg-type]
        entry = FlowEntry(0, 10, match(in_port=1), (Output(2),))
        first = conn.send(flow_add_packed(entry))
        for _ in range(RECENT - 1):
            conn.send(parser.OFPEchoRequest(PROTOCOL))
        latest = conn.send(flow_add_packed(entry))  # the first one's slot is taken now
        for xid in (first, latest):
            error = parser.OFPErrorMsg(PROTOCOL, type_=5, code=1)
            error.xid = xid
            await conn._dispatch(error, lambda *_: asyncio.sleep(0))
        return conn._errors

    errors = asyncio.run(run())
    assert len(errors) == 1 and errors[0][0] == RECENT + 1
    assert "OFPT_ERROR type=5 code=1 for OFPFlowMod" in errors[0][1]
