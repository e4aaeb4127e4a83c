"""Byte layouts of the XDP programs' map keys and values (``bpf/include/*.h``), as pure functions.

Addresses and L4 ports are in network order, as the programs read them from
the frame; port numbers and counters are in host order (little-endian here).

Examples
--------
>>> flow_key(src="10.0.0.1", dst="10.0.0.2", proto=17, dport=5001, stage=STAGE_HOST_IN, in_port=3).hex()
'0a0000010a0000020000138911010300'
>>> len(action(ACT_ENCAP, port=2, eth_src=0x300000000324))
24
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

STAGE_HOST_IN = 1
STAGE_TERMINATE = 2
STAGE_DELIVER = 3
ACT_ENCAP = 1
ACT_OUTPUT = 2
EVERYTHING = 0  # the address key of what applies to every address no entry names (the gateway's)
WILD_RULES = 64

# bpf/include/sr_verdict.h: enum sr_reason, in order.
REASONS = (
    "forwarded", "encapsulated", "delivered", "local", "passed",
    "drop_malformed", "drop_exhausted", "drop_no_port", "drop_no_rule", "drop_forged", "routed", "replicate",
    "drop_duplicate", "drop_policed",
)

# Linux XDP actions.
XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT = range(5)
XDP_ACTIONS = {0: "aborted", 1: "drop", 2: "pass", 3: "tx", 4: "redirect"}


def _ip(value: str | int) -> bytes:
    return int(ipaddress.IPv4Address(value)).to_bytes(4, "big")


def _mac(value: int) -> bytes:
    return value.to_bytes(6, "big")


def flow_key(
    src: str | int = 0, dst: str | int = 0, sport: int = 0, dport: int = 0, proto: int = 0,
    stage: int = 0, in_port: int = 0,
) -> bytes:
    """``struct sr_flow_key`` (16 bytes): what the classifiers compare."""
    return _ip(src) + _ip(dst) + struct.pack("!HHBB", sport, dport, proto, stage) + struct.pack("<H", in_port)


def wild_rule(value: bytes, mask: bytes, action_index: int) -> bytes:
    """``struct sr_wild_rule``: a masked key and the action it selects."""
    if len(value) != 16 or len(mask) != 16:
        raise ValueError("wildcard value and mask are 16-byte flow keys")
    masked = bytes(v & m for v, m in zip(value, mask, strict=True))
    return masked + mask + struct.pack("<II", action_index, 1)


def action(
    kind: int, port: int, eth_dst: int = 0, eth_src: int = 0, vlan_tci: int = 0, mpls: int = 0
) -> bytes:
    """``struct sr_action`` (24 bytes): the header to write and the first port."""
    return (struct.pack("<BBH", kind, 0, port) + _mac(eth_dst) + _mac(eth_src)
            + struct.pack("!H", vlan_tci) + b"\0\0" + struct.pack("!I", mpls))


def host(mac: int, port: int) -> bytes:
    """``struct sr_host``: a local host's MAC and port."""
    return _mac(mac) + struct.pack("<H", port)


def mac_value(mac: int) -> bytes:
    """``struct sr_mac``: a MAC padded to 8 bytes."""
    return _mac(mac) + b"\0\0"


def ipv4(address: str | int) -> bytes:
    """A ``__be32`` address key."""
    return _ip(address)


def u32(value: int) -> bytes:
    return struct.pack("<I", value)


def lpm_key(prefix: str) -> bytes:
    """``struct lpm_key``: prefix length (host order) then the address (network order)."""
    network = ipaddress.IPv4Network(prefix, strict=False)
    return struct.pack("<I", network.prefixlen) + int(network.network_address).to_bytes(4, "big")


@dataclass(frozen=True)
class Count:
    packets: int
    bytes: int


def sum_counts(per_cpu: list[bytes]) -> Count:
    """Add up one ``struct sr_count`` per CPU."""
    packets = octets = 0
    for raw in per_cpu:
        p, b = struct.unpack("<QQ", raw[:16])
        packets += p
        octets += b
    return Count(packets, octets)


def sum_u64(per_cpu: list[bytes]) -> int:
    return sum(struct.unpack("<Q", raw[:8])[0] for raw in per_cpu)
