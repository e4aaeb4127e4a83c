"""The OpenFlow rows of ``srfabric bench hostile``: what a peer that reaches the controller's OpenFlow port (TLS
with mutual certificates) gets by connecting without a certificate, with another CA's, with the fabric's own
but for another dpid, and what one admitted as a switch of its own gets by sending garbage, floods and forged
messages. Each row returns what the attacker got, in words; the caller then checks the controller."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.controller.packets import ArpPacket, lldp_frame
from srfabric.xdp import frames
from srfabric.xdp.of_messages import PortDesc, header, packet_in, port_status
from srfabric_tools.bench.hostile_peer import HostilePeer, tls_context

INTRUDER_DPID = 0xBAD0  # a switch of the fabric's CA, certified for a dpid of its own: a rogue or stolen switch
HANDSHAKE_WAIT_S = 8.0  # longer than the controller's handshake limit


@dataclass(frozen=True)
class Target:
    port: int  # the controller's OpenFlow port
    pki: Path  # holds the certificates made by ``hostile.certificates``
    victim: int  # the dpid of a connected switch of the fabric
    victim_port: int  # one of its fabric ports
    scale: float  # 1.0: the full counts; the quick form sends fewer


async def _refused_at_tls(target: Target, name: str | None, folder: Path | None) -> str:
    peer = HostilePeer(target.port, tls_context(folder, name))
    why = await peer.open()
    if why is not None:
        return f"TLS refused: {why}"
    peer.play_switch(target.victim)
    await peer.wait_closed(HANDSHAKE_WAIT_S)
    await peer.close()
    return peer.fate()


async def plaintext(target: Target) -> str:
    peer = HostilePeer(target.port, None)
    await peer.open()
    peer.play_switch(target.victim)  # a plain HELLO where TLS is expected
    await peer.wait_closed(HANDSHAKE_WAIT_S)
    await peer.close()
    return peer.fate()


async def no_certificate(target: Target) -> str:
    return await _refused_at_tls(target, None, None)


async def another_ca(target: Target) -> str:
    return await _refused_at_tls(target, "stranger", target.pki / "other-ca")


async def claims_another_dpid(target: Target) -> str:
    """The intruder's own certificate, claiming a connected switch's dpid; a port-down for it sent at once."""
    peer = HostilePeer(target.port, tls_context(target.pki, "intruder"))
    await peer.open()
    peer.play_switch(target.victim)
    await asyncio.sleep(0.2)
    peer.send(port_status(PortDesc(target.victim_port, "forged", 0x02BAD0000001), down=True))
    await peer.wait_closed(HANDSHAKE_WAIT_S)
    await peer.close()
    return peer.fate()


async def second_certificate(target: Target) -> str:
    """A certificate of the fabric's CA that does name the victim's dpid, but is not the one it connected with."""
    peer = HostilePeer(target.port, tls_context(target.pki, "replacement"))
    await peer.open()
    peer.play_switch(target.victim)
    await peer.wait_closed(HANDSHAKE_WAIT_S)
    await peer.close()
    return peer.fate()


async def _garbage(target: Target, data: bytes, then_wait: float = HANDSHAKE_WAIT_S) -> str:
    peer = HostilePeer(target.port, tls_context(target.pki, "intruder"))
    await peer.open()
    peer.send(data)
    await peer.drain()
    await peer.wait_closed(then_wait)
    await peer.close()
    return peer.fate()


async def random_bytes(target: Target) -> str:
    return await _garbage(target, os.urandom(64 * 1024))


async def bad_length(target: Target) -> str:
    return await _garbage(target, bytes([4, ofp.OFPT_HELLO, 0, 4, 0, 0, 0, 1]))  # shorter than its own header


async def half_sent(target: Target) -> str:
    """A header announcing 64 KiB, half of it sent, then silence."""
    return await _garbage(target, header(ofp.OFPT_PACKET_IN, 7)[:2] + (0xFFFF).to_bytes(2, "big") + bytes(4)
                          + os.urandom(32 * 1024))


async def idle_connections(target: Target) -> str:
    """Plain TCP connections that never begin their TLS handshake: how many the controller closed, and when."""
    count = max(20, int(300 * target.scale))
    loop = asyncio.get_running_loop()
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.setblocking(False)
        await loop.sock_connect(s, ("127.0.0.1", target.port))
        sockets.append(s)
    started, closed = time.monotonic(), 0
    reads = [asyncio.create_task(loop.sock_recv(s, 1)) for s in sockets]
    done, pending = await asyncio.wait(reads, timeout=HANDSHAKE_WAIT_S)
    closed = sum(1 for task in done if task.exception() is not None or task.result() == b"")
    for task in pending:
        task.cancel()
    for s in sockets:
        s.close()
    return (f"{closed} of {count} idle connections closed by the controller within "
            f"{time.monotonic() - started:.1f} s")


async def _admitted(target: Target) -> HostilePeer:
    peer = HostilePeer(target.port, tls_context(target.pki, "intruder"))
    why = await peer.open()
    if why is not None:
        raise ConnectionError(why)
    peer.play_switch(INTRUDER_DPID)
    await asyncio.wait_for(peer.taken.wait(), 10)
    return peer


def mutate(message: bytes, rng: random.Random) -> bytes:
    """Up to eight bytes of a message's body changed at random (its header kept, so that the stream stays framed
    and every mutation reaches the parser)."""
    body = bytearray(message)
    for _ in range(rng.randint(1, 8)):
        body[rng.randrange(8, len(body))] = rng.randrange(256)
    return bytes(body)


async def mutated_packet_ins(target: Target) -> str:
    count, rng = max(100, int(3000 * target.scale)), random.Random(42)
    arp = ArpPacket(1, 0x02BAD0000002, "10.9.9.9", 0, "10.0.0.1", 0x02BAD0000002, 0xFFFFFFFFFFFF).to_bytes()
    udp = frames.udp_frame(dst_mac=0x020000000002, src_mac=0x02BAD0000002, src="10.9.9.9", dst="10.0.0.2",
                           sport=1, dport=2, size=128)
    bases = [packet_in(1, 0, 0, frame) for frame in (arp, udp, lldp_frame(target.victim, target.victim_port))]
    peer, sent, reconnects = await _admitted(target), 0, 0
    while sent < count:
        peer.send(mutate(bases[sent % len(bases)], rng))
        sent += 1
        if sent % 100 == 0 and not await peer.drain():
            await peer.close()
            peer, reconnects = await _admitted(target), reconnects + 1
    await peer.drain()
    await asyncio.sleep(1.0)
    await peer.close()
    return f"{sent} mutated packet-ins sent; {peer.fate()}; reconnected {reconnects} times"


async def echo_flood(target: Target) -> str:
    count = max(1000, int(20_000 * target.scale))
    peer = await _admitted(target)
    before = peer.received["ECHO_REPLY"]
    for xid in range(count):
        peer.send(header(ofp.OFPT_ECHO_REQUEST, xid, b"x" * 8))
        if xid % 500 == 0:
            await peer.drain()
    await peer.drain()
    deadline = time.monotonic() + 10
    while peer.received["ECHO_REPLY"] - before < count and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await peer.close()
    return f"{count} echo requests sent, {peer.received['ECHO_REPLY'] - before} answered; {peer.fate()}"


async def forged_lldp(target: Target) -> str:
    """LLDP naming a connected switch's fabric port, sent by an admitted switch: unsigned, then as an old
    controller's frame (another key), so that the controller would see a link to the intruder."""
    peer = await _admitted(target)
    for key in (b"", b"a key guessed"):
        for _ in range(5):
            peer.send(packet_in(1, 0, 0, lldp_frame(target.victim, target.victim_port, key=key)))
    await peer.drain()
    await asyncio.sleep(1.5)
    await peer.close()
    return f"10 forged LLDP frames sent as packet-ins; {peer.fate()}"


async def forged_port_status(target: Target) -> str:
    """An admitted switch reports ports down by the numbers of the victim's fabric ports (its connection speaks only
    for its own dpid)."""
    peer = await _admitted(target)
    for number in range(1, 9):
        peer.send(port_status(PortDesc(number, f"s1-eth{number}", 0x020000000100 + number), down=True))
    await peer.drain()
    await asyncio.sleep(1.0)
    await peer.close()
    return f"8 port-down reports sent; {peer.fate()}"


ROWS: dict[str, Callable[[Target], Awaitable[str]]] = {
    "plaintext HELLO where TLS is required": plaintext,
    "TLS without a client certificate": no_certificate,
    "certificate of another CA": another_ca,
    "fabric certificate, claims a connected switch's dpid (and sends its port down)": claims_another_dpid,
    "second certificate for a connected dpid": second_certificate,
    "64 KiB of random bytes": random_bytes,
    "message shorter than its header": bad_length,
    "half of a 64 KiB message, then silence": half_sent,
    "idle connections that never start TLS": idle_connections,
    "mutated packet-ins (ARP, UDP, LLDP) from an admitted switch": mutated_packet_ins,
    "echo request flood": echo_flood,
    "forged LLDP naming a fabric port (a link to the intruder)": forged_lldp,
    "forged port-down reports from an admitted switch": forged_port_status,
}

# Rows whose attacker is admitted as a switch of its own (its certificate names its dpid): a compromised switch.
ADMITTED = frozenset(name for name, row in ROWS.items()
                     if row in (mutated_packet_ins, echo_flood, forged_lldp, forged_port_status))
