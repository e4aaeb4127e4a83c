"""OpenFlow over TLS with the fabric's certificates: a switch whose certificate names the dpid it claims is taken;
one naming another dpid, a second connection for a connected dpid with another certificate, plain TCP and a
certificate of another CA are refused, logged and counted by why, and the first switch stays connected. Real TLS
on loopback; the switches are ``WireSwitch``es."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

import pytest

from srfabric.controller.controller import Controller
from srfabric.security.pki import make_ca, make_certificate
from srfabric.security.switch_identity import client_context, refusal, server_context
from tests.unit.controller.wire_switch import WireSwitch


def test_only_the_switch_its_certificate_names_is_taken(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ca = make_ca(tmp_path)
    make_certificate(tmp_path, ca, "controller")
    make_certificate(tmp_path, ca, "ovs-a", dpids=[1])
    make_certificate(tmp_path, ca, "ovs-b", dpids=[1])
    make_certificate(tmp_path, ca, "liar", dpids=[0x99])
    other = tmp_path / "other"
    make_certificate(other, make_ca(other, "another CA"), "stranger", dpids=[3])

    async def scenario() -> tuple[list[int], dict[str, int]]:
        controller = Controller()
        controller.server.ssl = server_context(tmp_path)
        controller.server.admit = refusal
        port = await controller.server.start("127.0.0.1", 0)
        first = WireSwitch(1)
        await first.connect(port, client_context(tmp_path, "ovs-a"))
        await controller.wait_until(lambda: 1 in controller.switches, 5, "switch 1 taken")
        tries = [(WireSwitch(2), client_context(tmp_path, "liar")), (WireSwitch(1), client_context(tmp_path, "ovs-b")),
                 (WireSwitch(3), None), (WireSwitch(3), client_context(other, "stranger"))]
        for switch, tls in tries:
            with contextlib.suppress(OSError):  # refused during the TLS handshake: the client may see it at once
                await switch.connect(port, tls)
        await controller.wait_until(lambda: sum(controller.server.refused.values()) >= 4, 10, "four refusals")
        connected = sorted(controller.switches)
        same = controller.switches[1].peer
        for switch, _ in [(first, None), *tries]:
            await switch.close()
        await controller.stop()
        assert same  # the first connection is the one kept
        return connected, dict(controller.server.refused)

    with caplog.at_level(logging.WARNING):
        connected, refused = asyncio.run(scenario())
    assert connected == [1]
    assert refused["identity"] == 2 and sum(refused.values()) == 4, refused
    messages = [r.getMessage() for r in caplog.records if getattr(r, "event", "") == "switch_refused"]
    assert any("claims dpid 0x2, but its certificate (CN=liar) names 0x99" in m for m in messages), messages
    assert any("dpid 0x1 is connected already with another certificate" in m for m in messages), messages
