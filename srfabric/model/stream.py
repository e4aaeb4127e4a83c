"""A steered stream: frames of one talker and listener pinned to an explicit switch path.

A time-sensitive stream (802.1Qcc's talker and listener) is admitted by the
TSN scheduler, which picks its path and slot; the controller only needs what
this holds to install it. A best-effort flow class uses the same object with
``time_triggered`` off: its frames follow the path without the priority mark. A
stream of SR class A or B (802.1Qav, credit-based shaping) has ``sr_class`` set
to its priority: its frames carry that class's mark and queue on every hop.

Examples
--------
>>> s = SteeredStream("cam1", 1, "h1", "h4", ("s1", "s2", "s4"), udp_dst=5001)
>>> s.match_fields({"h1": "10.0.0.1", "h4": "10.0.0.4"})["udp_dst"]
5001
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from srfabric.errors import ModelError

MAX_OWNER = 2**24 - 1  # the cookie keeps 24 bits of owner beside the entry's digest
SR_CLASS_PRIORITY = {"A": 3, "B": 2}  # 802.1Q Table 34-1's default priorities (PCP) of SR classes A and B


@dataclass(frozen=True)
class SteeredStream:
    """Frames from ``talker`` to ``listener`` (UDP, optionally on given ports) along ``path`` (switch names)."""

    name: str
    owner: int
    talker: str
    listener: str
    path: tuple[str, ...]
    udp_dst: int | None = None
    udp_src: int | None = None
    time_triggered: bool = True
    second_path: tuple[str, ...] = ()  # IEEE 802.1CB: a second seamless tree, every frame sent along both
    sr_class: int | None = None  # the priority of its SR class (3: A, 2: B); None: time-triggered or best effort
    # Policed at its talker's edge by an OpenFlow meter (``serve --psfp-meters``): its reservation in frames a
    # second and a bucket of frames; None: not metered there.
    meter: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if not 0 < self.owner <= MAX_OWNER:
            raise ModelError("owner", f"must be in 1..{MAX_OWNER}, got {self.owner}")
        if not self.path:
            raise ModelError("path", "needs at least the talker's switch")
        if self.sr_class is not None and (self.time_triggered or self.sr_class not in SR_CLASS_PRIORITY.values()):
            raise ModelError("sr_class", f"must be 3 (class A) or 2 (class B) on a stream that is not time-triggered, "
                                         f"got {self.sr_class}")
        if self.meter is not None and not (1 <= self.meter[0] <= 0xFFFFFFFF and 1 <= self.meter[1] <= 0xFFFFFFFF):
            raise ModelError("meter", f"frames a second and bucket must each be in 1..{0xFFFFFFFF}, got {self.meter}")
        for name in ("udp_dst", "udp_src"):
            port = getattr(self, name)
            if port is not None and not 0 <= port <= 65535:
                raise ModelError(name, f"must be in 0..65535, got {port}")

    def match_fields(self, addresses: dict[str, str]) -> dict[str, int]:
        """The fields that pick this stream's frames at its talker's edge, given host addresses."""
        fields = {
            "eth_type": 0x0800,
            "ipv4_src": int(ipaddress.IPv4Address(addresses[self.talker])),
            "ipv4_dst": int(ipaddress.IPv4Address(addresses[self.listener])),
            "ip_proto": 17,
        }
        if self.udp_src is not None:
            fields["udp_src"] = self.udp_src
        if self.udp_dst is not None:
            fields["udp_dst"] = self.udp_dst
        return fields
