"""A talker's end-system replication numbering (IEEE 802.1CB): UDP datagrams sent as Ethernet frames with an
R-TAG after the MAC addresses, numbered one after another, on a raw socket of the talker's interface. It stands in
for a UDP socket in ``endpoints.talk`` (``sendto``, ``setsockopt``), so a redundant stream's frames are timed as
any other's.
"""

from __future__ import annotations

import socket
from pathlib import Path
from types import TracebackType
from typing import Any

from srfabric.codecs.macaddr import mac_from_str
from srfabric.tsn.model.frer import SEQ_SPACE
from srfabric.xdp.frames import udp_frame
from srfabric.xdp.frer import rtag

HEADERS = 14 + 20 + 8  # Ethernet, IPv4, UDP


class RtagSender:
    """Frames from ``ifname`` (its MAC) and ``src_ip``:``sport`` to ``dst_mac``; each destination (address and
    port: one stream) numbered on its own, one more each datagram."""

    def __init__(self, ifname: str, dst_mac: int, src_ip: str, sport: int) -> None:
        self.src_mac = mac_from_str(Path(f"/sys/class/net/{ifname}/address").read_text().strip(), ifname)
        self.dst_mac, self.src_ip, self.sport = dst_mac, src_ip, sport
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((ifname, 0))
        self.sequences: dict[tuple[str, int], int] = {}

    def setsockopt(self, *option: Any) -> None:
        self.sock.setsockopt(*option)

    def sendto(self, payload: bytes, address: tuple[str, int]) -> None:
        frame = udp_frame(self.dst_mac, self.src_mac, self.src_ip, address[0], self.sport, address[1],
                          HEADERS + len(payload))
        sequence = self.sequences.get(address, 0)
        self.sock.send(rtag(sequence, frame[:HEADERS] + payload))
        self.sequences[address] = (sequence + 1) % SEQ_SPACE

    def __enter__(self) -> RtagSender:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.sock.close()
