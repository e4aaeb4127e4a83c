"""Service chains and their flow classifiers (the networking-sfc model, reduced to what routing needs)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from srfabric.errors import ModelError

PROTOCOLS = {"icmp": 1, "tcp": 6, "udp": 17}
ETHERTYPES = ("IPv4", "IPv6")


@dataclass(frozen=True)
class FlowClassifier:
    """Which packets enter a chain: ethertype, protocol, prefixes and port ranges.

    Field names follow networking-sfc's flow classifier. Ranges are inclusive.

    Examples
    --------
    >>> FlowClassifier(protocol="udp", destination_port_range=(5001, 5001)).validate()
    >>> FlowClassifier(destination_port_range=(1, 2)).validate()
    Traceback (most recent call last):
    srfabric.errors.ModelError: destination_port_range: a port range needs protocol tcp or udp
    """

    ethertype: str = "IPv4"  # or "IPv6": prefixes of that family, and "icmp" is ICMPv6
    protocol: str | None = None
    source_ip_prefix: str | None = None
    destination_ip_prefix: str | None = None
    source_port_range: tuple[int, int] | None = None
    destination_port_range: tuple[int, int] | None = None

    def validate(self) -> None:
        if self.ethertype not in ETHERTYPES:
            raise ModelError("ethertype", f"{self.ethertype!r} is not one of {', '.join(ETHERTYPES)}")
        if self.protocol is not None and self.protocol not in PROTOCOLS:
            raise ModelError("protocol", f"{self.protocol!r} is not one of {', '.join(PROTOCOLS)}")
        for name in ("source_ip_prefix", "destination_ip_prefix"):
            prefix = getattr(self, name)
            if prefix is None:
                continue
            try:
                (ipaddress.IPv6Network if self.ipv6 else ipaddress.IPv4Network)(prefix, strict=False)
            except ValueError:
                raise ModelError(name, f"{prefix!r} is not an {self.ethertype} prefix") from None
        for name in ("source_port_range", "destination_port_range"):
            span = getattr(self, name)
            if span is None:
                continue
            if self.protocol not in ("tcp", "udp"):
                raise ModelError(name, "a port range needs protocol tcp or udp")
            low, high = span
            if not 0 <= low <= high <= 65535:
                raise ModelError(name, f"{low}..{high} is not a range within 0..65535")

    @property
    def ipv6(self) -> bool:
        """Whether it classifies IPv6 (else IPv4)."""
        return self.ethertype == "IPv6"

    @property
    def key(self) -> str:
        """A short label such as ``udp:5001`` for reports."""
        proto = self.protocol or "ip"
        if self.destination_port_range:
            low, high = self.destination_port_range
            return f"{proto}:{low}" if low == high else f"{proto}:{low}-{high}"
        return proto


MAX_PATHS = 64
"""Load-balanced paths of one chain: one select-group bucket each at its ingress switch."""

MAX_PRIORITY = 40
"""How far a chain may rank above others (it stays below the port-role entries)."""

LB_FIELDS = ("eth_src", "eth_dst", "ip_src", "ip_dst", "ip_proto", "tcp_src", "tcp_dst", "udp_src", "udp_dst")


@dataclass(frozen=True)
class Alternative:
    """One way through a load-balanced chain: the functions it crosses and its share (``weight``)."""

    functions: tuple[str, ...]
    weight: int = 1


@dataclass(frozen=True)
class Chain:
    """An ordered list of service functions that traffic from ``source`` to ``destination`` crosses.

    With ``destination`` None (a classifier without one, networking-sfc's usual
    form) the chain ends at its last function: traffic then goes on to wherever
    its destination address leads, chosen at the switch that function hands it
    back to.

    With ``alternatives`` the chain's flows are spread over several such lists
    by weight (``functions`` is then ignored); ``taps`` are functions that get a
    copy of the chain's traffic and return nothing; ``lb_fields`` name the
    header fields that pick a flow's alternative, so that flows agreeing on
    them take the same one (empty: the switch's 5-tuple hash decides).
    """

    name: str
    classifier: FlowClassifier
    functions: tuple[str, ...]
    source: str
    destination: str | None
    chain_id: int = 0
    alternatives: tuple[Alternative, ...] = ()
    taps: tuple[str, ...] = ()
    lb_fields: tuple[str, ...] = ()
    priority: int = 0  # above other chains' entries by this much (a service graph's joined chains)

    def paths(self) -> tuple[Alternative, ...]:
        """Every alternative, or the one list of ``functions``."""
        return self.alternatives or (Alternative(self.functions),)

    @property
    def grouped(self) -> bool:
        """Whether the ingress switch needs a group (load balancing or taps) instead of one action list."""
        return len(self.alternatives) > 1 or bool(self.taps)

    def validate(self, known_hosts: set[str], known_functions: set[str]) -> None:
        self.classifier.validate()
        if len(self.alternatives) > MAX_PATHS:
            raise ModelError("alternatives", f"{len(self.alternatives)} load-balanced paths; at most {MAX_PATHS}")
        for index, alternative in enumerate(self.alternatives):
            if not 1 <= alternative.weight <= 0xFFFF:
                raise ModelError(f"alternatives[{index}].weight", f"{alternative.weight} is outside 1..65535")
            for name in alternative.functions:
                if name not in known_functions:
                    raise ModelError(f"alternatives[{index}]", f"service function {name!r} is unknown")
        for index, name in enumerate(self.taps):
            if name not in known_functions:
                raise ModelError(f"taps[{index}]", f"service function {name!r} is unknown")
        for name in self.lb_fields:
            if name not in LB_FIELDS:
                raise ModelError("lb_fields", f"{name!r} is not one of {', '.join(LB_FIELDS)}")
        if self.source not in known_hosts:
            raise ModelError("source", f"host {self.source!r} is unknown")
        if self.destination is not None and self.destination not in known_hosts:
            raise ModelError("destination", f"host {self.destination!r} is unknown")
        if self.destination is None and not all(p.functions for p in self.paths()):
            raise ModelError("destination", "a chain without a destination needs a service function on every path "
                                            "(it ends at the last one)")
        for index, name in enumerate(self.functions):
            if name not in known_functions:
                raise ModelError(f"functions[{index}]", f"service function {name!r} is unknown")
        if not 0 <= self.priority <= MAX_PRIORITY:
            raise ModelError("priority", f"{self.priority} is outside 0..{MAX_PRIORITY}")
        if not 0 <= self.chain_id < 1 << 24:
            raise ModelError("chain_id", f"{self.chain_id} is outside 0..{(1 << 24) - 1}")
