"""A flow classifier record as srfabric's ``FlowClassifier``, reversed, and two classifiers' common traffic (the
join of two chains in a service graph). Pure.

>>> a = classifier_of({"ethertype": "IPv4", "protocol": "udp", "source_ip_prefix": "10.0.0.0/24",
...                    "destination_ip_prefix": None, "source_port_range_min": None, "source_port_range_max": None,
...                    "destination_port_range_min": 5000, "destination_port_range_max": 5010})
>>> a.destination_port_range, reversed_classifier(a).source_port_range
((5000, 5010), (5000, 5010))
>>> intersect(a, FlowClassifier(source_ip_prefix="10.0.0.7/32")).source_ip_prefix
'10.0.0.7/32'
"""

from __future__ import annotations

import ipaddress
from typing import Any

from srfabric.model.chain import FlowClassifier

Record = dict[str, Any]


def classifier_of(fc: Record) -> FlowClassifier:
    def span(low: Any, high: Any) -> tuple[int, int] | None:
        if low is None and high is None:
            return None
        return (0 if low is None else low, 65535 if high is None else high)

    return FlowClassifier(
        ethertype=fc["ethertype"], protocol=fc["protocol"], source_ip_prefix=fc["source_ip_prefix"],
        destination_ip_prefix=fc["destination_ip_prefix"],
        source_port_range=span(fc["source_port_range_min"], fc["source_port_range_max"]),
        destination_port_range=span(fc["destination_port_range_min"], fc["destination_port_range_max"]))


def reversed_classifier(c: FlowClassifier) -> FlowClassifier:
    return FlowClassifier(c.ethertype, c.protocol, c.destination_ip_prefix, c.source_ip_prefix,
                          c.destination_port_range, c.source_port_range)


def _overlap_span(a: tuple[int, int] | None, b: tuple[int, int] | None) -> tuple[int, int] | None | bool:
    if a is None or b is None:
        return a or b
    low, high = max(a[0], b[0]), min(a[1], b[1])
    return (low, high) if low <= high else False


def _overlap_prefix(a: str | None, b: str | None) -> str | None | bool:
    if a is None or b is None:
        return a or b
    na, nb = ipaddress.ip_network(a, strict=False), ipaddress.ip_network(b, strict=False)
    if not na.overlaps(nb):
        return False
    return str(na if na.prefixlen >= nb.prefixlen else nb)


def intersect(a: FlowClassifier, b: FlowClassifier) -> FlowClassifier | None:
    """The traffic both classify, or None when they are disjoint."""
    if a.ethertype != b.ethertype or (a.protocol and b.protocol and a.protocol != b.protocol):
        return None
    parts = [_overlap_prefix(a.source_ip_prefix, b.source_ip_prefix),
             _overlap_prefix(a.destination_ip_prefix, b.destination_ip_prefix),
             _overlap_span(a.source_port_range, b.source_port_range),
             _overlap_span(a.destination_port_range, b.destination_port_range)]
    if any(part is False for part in parts):
        return None
    src, dst, sport, dport = parts
    return FlowClassifier(a.ethertype, a.protocol or b.protocol, src, dst, sport, dport)  # type: ignore[arg-type]
