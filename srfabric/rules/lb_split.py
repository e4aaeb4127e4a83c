"""Load balancing on named header fields (networking-sfc's ``lb_fields``) as masked matches.

OpenFlow 1.3 cannot tell a select group which fields to hash (Open vSwitch
takes a selection method only in OpenFlow 1.5), so the ingress switch splits a
chain's classifier instead: one entry per value of a few low bits of the named
fields, each writing the header of one alternative path. Flows that agree on
those fields always take the same path, on any switch that matches masks
(Open vSwitch and the XDP edge alike), and the entries are spread over the
paths by weight. Pure: no I/O.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from srfabric.rules.entries import Match, match_fields
from srfabric.rules.pipeline import IPV4_ETHERTYPE

# networking-sfc's field -> (OpenFlow field, width in bits, the ip_proto it needs or None)
LB_MATCH_FIELDS: dict[str, tuple[str, int, int | None]] = {
    "eth_src": ("eth_src", 48, None),
    "eth_dst": ("eth_dst", 48, None),
    "ip_src": ("ipv4_src", 32, None),
    "ip_dst": ("ipv4_dst", 32, None),
    "ip_proto": ("ip_proto", 8, None),
    "tcp_src": ("tcp_src", 16, 6),
    "tcp_dst": ("tcp_dst", 16, 6),
    "udp_src": ("udp_src", 16, 17),
    "udp_dst": ("udp_dst", 16, 17),
}
UNMASKABLE = {"ip_proto"}  # OpenFlow 1.3 has no mask for it: it can only be fixed by the classifier
MIN_BITS = 4  # 16 entries per classifier match: weights resolved to 1/16
MAX_BITS = 6  # 64 entries: enough for one each when a group has MAX_PATHS pairs


REVERSED = {"eth_src": "eth_dst", "eth_dst": "eth_src", "ip_src": "ip_dst", "ip_dst": "ip_src",
            "tcp_src": "tcp_dst", "tcp_dst": "tcp_src", "udp_src": "udp_dst", "udp_dst": "udp_src"}


def reverse_fields(lb_fields: Sequence[str]) -> tuple[str, ...]:
    """The fields a symmetric chain's reverse direction splits on: sources and destinations swapped,
    so that a reply carries the same bits in them and reaches the pairs its request crossed.

    >>> reverse_fields(["tcp_src", "ip_dst", "ip_proto"])
    ('tcp_dst', 'ip_src', 'ip_proto')
    """
    return tuple(REVERSED.get(name, name) for name in lb_fields)


def split_bits(paths: int) -> int:
    """How many bits the split uses for ``paths`` alternatives.

    >>> split_bits(2), split_bits(8), split_bits(64)
    (4, 5, 6)
    """
    return min(MAX_BITS, max(MIN_BITS, math.ceil(math.log2(max(paths, 1))) + 2))


def slot_counts(weights: Sequence[int], slots: int) -> list[int]:
    """How many of ``slots`` each weight gets (largest remainder; the totals add up to ``slots``).

    >>> slot_counts([1, 3], 16), slot_counts([1, 1, 1], 16), slot_counts([5], 1)
    ([4, 12], [6, 5, 5], [1])
    """
    total = sum(weights)
    shares = [w * slots / total for w in weights]
    counts = [math.floor(s) for s in shares]
    by_remainder = sorted(range(len(weights)), key=lambda i: (counts[i] - shares[i], i))
    for i in by_remainder[: slots - sum(counts)]:
        counts[i] += 1
    return counts


def slot(values: Sequence[int], widths: Sequence[int]) -> int:
    """Where a combination of field values sits among the weight-ordered slots.

    The top bits are the XOR of all the values and the rest the values of all fields but the
    widest: a one-to-one map in which any single field, varied alone, walks the top bits too, so
    the flows that differ in it alone are spread over the whole weight range, not one corner of it.

    >>> sorted(slot((a, b), (2, 2)) for a in range(4) for b in range(4)) == list(range(16))
    True
    >>> [slot((a, 1), (2, 2)) >> 2 for a in range(4)]  # the top bits take every value
    [1, 0, 3, 2]
    """
    widest = widths.index(max(widths)) if widths else 0
    top = 0
    low = 0
    low_width = 0
    for index, (value, width) in enumerate(zip(values, widths, strict=True)):
        top ^= value
        if index != widest:
            low |= value << low_width
            low_width += width
    return top << low_width | low


def applicable(lb_fields: Sequence[str], base: Match) -> list[str]:
    """The named fields every packet of ``base`` carries (transport ports only with their protocol).

    >>> from srfabric.rules.entries import match
    >>> applicable(["tcp_src", "udp_src", "ip_dst"], match(eth_type=0x800, ip_proto=17))
    ['udp_src', 'ip_dst']
    """
    fields = match_fields(base)
    proto = fields.get("ip_proto", (None, None))[0]
    found = []
    for name in lb_fields:
        of_name, _, needs = LB_MATCH_FIELDS[name]
        if name in UNMASKABLE and of_name not in fields:
            continue  # varies, but cannot be split by masks: left to nothing (see ``split``)
        if needs is not None and proto != needs:
            continue
        if of_name.startswith("ipv4") and fields.get("eth_type", (None, None))[0] != IPV4_ETHERTYPE:
            continue
        found.append(name)
    return found


def _free_bits(width: int, mask: int | None, want: int) -> list[int]:
    """Up to ``want`` of the lowest bit positions the existing ``mask`` leaves free."""
    if mask is None:
        return []
    return [bit for bit in range(width) if not mask >> bit & 1][:want]


def split(base: Match, lb_fields: Sequence[str], weights: Sequence[int]) -> list[tuple[Match, int]] | None:
    """``base`` split into disjoint matches on the low bits of ``lb_fields``, each with its path's index.

    None when no named field applies to ``base`` (the switch's own hash then decides). A field the
    classifier fixes is the same for all its flows: with no free bit left, one match takes them all.

    Examples
    --------
    >>> from srfabric.rules.entries import match
    >>> parts = split(match(eth_type=0x800, ip_proto=6), ["tcp_src"], [1, 3])
    >>> len(parts), [sum(1 for _, i in parts if i == path) for path in (0, 1)]
    (16, [4, 12])
    >>> parts[0][0]
    (('eth_type', 2048, None), ('ip_proto', 6, None), ('tcp_src', 0, 15))
    >>> split(match(eth_type=0x800, ip_proto=17), ["tcp_src"], [1, 3]) is None
    True
    """
    names = applicable(lb_fields, base)
    if not names:
        return None
    fields = match_fields(base)
    bits = split_bits(len(weights))
    # Each field's free low bits, taken in turn so that every named field gets some.
    chosen: dict[str, list[int]] = {name: [] for name in names}
    free = {}
    for name in names:
        of_name, width, _ = LB_MATCH_FIELDS[name]
        mask = fields.get(of_name, (0, 0))[1] if name not in UNMASKABLE else None
        free[name] = _free_bits(width, mask, bits)
    for _ in range(bits):
        progressed = False
        for name in names:
            if sum(len(b) for b in chosen.values()) < bits and len(chosen[name]) < len(free[name]):
                chosen[name].append(free[name][len(chosen[name])])
                progressed = True
        if not progressed:
            break
    widths = [len(chosen[name]) for name in names]
    slots = 1 << sum(widths)
    counts = slot_counts(weights, slots)
    owner = [index for index, count in enumerate(counts) for _ in range(count)]
    parts = []
    for values in itertools.product(*(range(1 << width) for width in widths)):
        split_fields = dict(fields)
        for name, value_bits in zip(names, values, strict=True):
            if not chosen[name]:
                continue  # fixed by the classifier (or unmaskable): its match stays as it was
            of_name, width, _ = LB_MATCH_FIELDS[name]
            value, kept = split_fields.get(of_name, (0, 0))
            mask = kept or 0  # a field with a chosen bit had a mask (or was absent), never None
            for place, bit in enumerate(chosen[name]):
                value = value & ~(1 << bit) | (value_bits >> place & 1) << bit
                mask |= 1 << bit
            split_fields[of_name] = (value, None if mask == (1 << width) - 1 else mask)
        parts.append((tuple(sorted((name, value if mask is None else value & mask, mask)
                                   for name, (value, mask) in split_fields.items())), owner[slot(values, widths)]))
    return parts

