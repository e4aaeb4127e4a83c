"""OpenFlow over TLS with the fabric's certificates: a switch whose certificate names the dpid it claims is taken;
one naming another dpid, a second connection for a connected dpid with another certificate, plain TCP and a
certificate of another CA are refused, logged and counted by why, and the first switch stays connected. Real TLS
on loopback; the switches are ``WireSwitch``es."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from pathlib import Path

import pytest

from srfabric.controller.controller import Controller
from srfabric.security.pki import make_ca, make_certificate
from srfabric.security.switch_identity import client_context, dialing_context, refusal, server_context
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


def listening_switch_context(folder: Path, name: str) -> ssl.SSLContext:
    """A switch that listens for its controller, as Open vSwitch's ``pssl:`` does: its certificate, and the
    peer's required and checked against the CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_cert_chain(folder / f"{name}-cert.pem", folder / f"{name}-privkey.pem")
    context.load_verify_locations(folder / "ca-cert.pem")
    return context


def dialing_as(folder: Path, name: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.load_cert_chain(folder / f"{name}-cert.pem", folder / f"{name}-privkey.pem")
    context.load_verify_locations(folder / "ca-cert.pem")
    return context


def test_only_the_controller_may_dial_a_listening_switch_and_only_a_listening_certificate_may_answer(
        tmp_path: Path) -> None:
    ca = make_ca(tmp_path)
    make_certificate(tmp_path, ca, "controller")
    make_certificate(tmp_path, ca, "listening", dpids=[1], listens=True)
    make_certificate(tmp_path, ca, "other-listening", dpids=[2], listens=True)
    make_certificate(tmp_path, ca, "connecting", dpids=[3])

    async def handshake(server: str, client: ssl.SSLContext) -> bool:
        done = asyncio.Event()

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            done.set()
            writer.close()

        listening = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=listening_switch_context(tmp_path, server))
        port = listening.sockets[0].getsockname()[1]
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client)
            writer.close()
            await asyncio.wait_for(done.wait(), 2)  # TLS 1.3: a refused client hears of it after its handshake
            return True
        except (ssl.SSLError, ConnectionError, TimeoutError):
            return False
        finally:
            listening.close()

    async def scenario() -> list[bool]:
        return [await handshake("listening", dialing_context(tmp_path)),
                await handshake("listening", dialing_as(tmp_path, "other-listening")),
                await handshake("connecting", dialing_context(tmp_path))]

    assert asyncio.run(scenario()) == [True, False, False]


def test_no_switch_certificate_passes_as_the_controller_to_a_switch_that_connects(tmp_path: Path) -> None:
    """The XDP agent checks the controller's certificate against the address it dials: a switch's certificate,
    even a listening one (a TLS server's), names no address."""
    ca = make_ca(tmp_path)
    make_certificate(tmp_path, ca, "controller")
    make_certificate(tmp_path, ca, "listening", dpids=[1], listens=True)
    make_certificate(tmp_path, ca, "xdp", dpids=[2])

    async def handshake(server: str) -> bool:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tmp_path / f"{server}-cert.pem", tmp_path / f"{server}-privkey.pem")

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.close()

        listening = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
        port = listening.sockets[0].getsockname()[1]
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context(tmp_path, "xdp"))
            writer.close()
            return True
        except (ssl.SSLError, ConnectionError):
            return False
        finally:
            listening.close()

    async def scenario() -> list[bool]:
        return [await handshake("controller"), await handshake("listening")]

    assert asyncio.run(scenario()) == [True, False]
