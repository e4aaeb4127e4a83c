"""Turn a flow classifier into OpenFlow matches (port ranges become masked values)."""

from __future__ import annotations

import ipaddress
import itertools

from srfabric.model.chain import PROTOCOLS, FlowClassifier
from srfabric.rules.entries import Match, match
from srfabric.rules.pipeline import ICMPV6, IPV4_ETHERTYPE, IPV6_ETHERTYPE


def range_to_masks(low: int, high: int, bits: int = 16) -> list[tuple[int, int]]:
    """Cover ``low..high`` with the fewest (value, mask) pairs.

    >>> range_to_masks(5001, 5001)
    [(5001, 65535)]
    >>> range_to_masks(0, 65535)
    [(0, 0)]
    >>> range_to_masks(1, 6, bits=4)
    [(1, 15), (2, 14), (4, 14), (6, 15)]
    """
    full = (1 << bits) - 1
    pairs = []
    while low <= high:
        size = low & -low if low else 1 << bits
        while size > high - low + 1:
            size >>= 1
        pairs.append((low, full & ~(size - 1)))
        low += size
    return pairs


def prefix_match(prefix: str) -> tuple[int, int]:
    """``a.b.c.d/len`` (or an IPv6 prefix) as the (address, mask) pair of a masked match.

    >>> prefix_match("fd00::/64")[1] == (1 << 128) - (1 << 64)
    True
    """
    network = ipaddress.ip_network(prefix, strict=False)
    return int(network.network_address), int(network.netmask)


def classifier_matches(classifier: FlowClassifier, in_port: int | None = None) -> list[Match]:
    """One match per combination of masked source and destination port values.

    Examples
    --------
    >>> fc = FlowClassifier(protocol="udp", destination_port_range=(5001, 5001))
    >>> classifier_matches(fc, in_port=3)
    [(('eth_type', 2048, None), ('in_port', 3, None), ('ip_proto', 17, None), ('udp_dst', 5001, None))]
    """
    classifier.validate()
    ipv6 = classifier.ipv6
    family = "ipv6" if ipv6 else "ipv4"
    fields: dict[str, int | tuple[int, int]] = {"eth_type": IPV6_ETHERTYPE if ipv6 else IPV4_ETHERTYPE}
    if in_port is not None:
        fields["in_port"] = in_port
    if classifier.protocol is not None:
        fields["ip_proto"] = ICMPV6 if ipv6 and classifier.protocol == "icmp" else PROTOCOLS[classifier.protocol]
    if classifier.source_ip_prefix:
        fields[f"{family}_src"] = prefix_match(classifier.source_ip_prefix)
    if classifier.destination_ip_prefix:
        fields[f"{family}_dst"] = prefix_match(classifier.destination_ip_prefix)
    proto = classifier.protocol
    src = range_to_masks(*classifier.source_port_range) if classifier.source_port_range else [None]
    dst = range_to_masks(*classifier.destination_port_range) if classifier.destination_port_range else [None]
    matches = []
    for s, d in itertools.product(src, dst):
        combo = dict(fields)
        for name, pair in ((f"{proto}_src", s), (f"{proto}_dst", d)):
            if pair is not None and pair[1] != 0:
                combo[name] = pair[0] if pair[1] == 0xFFFF else pair
        matches.append(_canonical(combo))
    return matches


def _canonical(fields: dict[str, int | tuple[int, int]]) -> Match:
    # A full mask is the same as no mask; keep one spelling so entries compare equal.
    cleaned: dict[str, int | tuple[int, int]] = {}
    for name, value in fields.items():
        if isinstance(value, tuple) and name.startswith("ipv") and value[1] == (
                0xFFFFFFFF if name.startswith("ipv4") else (1 << 128) - 1):
            cleaned[name] = value[0]
        else:
            cleaned[name] = value
    return match(**cleaned)
