"""Flow entries and actions as immutable, hashable data.

Field names are OpenFlow's OXM names (``eth_src``, ``ipv4_dst``, ...);
bit-range actions name Open vSwitch fields (``eth_src``, ``vlan_tci``,
``mpls_label``, ``reg0``). A southbound adapter turns these into wire
messages for one switch; the fake switch in ``simulate`` executes them.
"""

from __future__ import annotations

import ipaddress
import zlib
from dataclasses import dataclass, field
from enum import IntEnum
from functools import lru_cache

from srfabric.codecs.macaddr import mac_to_str
from srfabric.errors import ModelError

Match = tuple[tuple[str, int, int | None], ...]
"""Sorted (field, value, mask) triples; every value is an integer (MACs and IPv4 too)."""
EntryKey = tuple[int, int, Match]  # (table, priority, match): what identifies an entry inside a switch


MAX_METER_ID = 0xFFFF0000  # OpenFlow 1.3's OFPM_MAX: the ids above it are virtual meters
U32_MAX = 0xFFFFFFFF

MAC_FIELDS = {"eth_src", "eth_dst", "arp_sha", "arp_tha"}
IPV4_FIELDS = {"ipv4_src", "ipv4_dst", "arp_spa", "arp_tpa"}
IPV6_FIELDS = {"ipv6_src", "ipv6_dst"}


def readable_value(name: str, value: int) -> str | int:
    """A field's value as people and OpenFlow libraries write it: MACs and IPv4 addresses as text.

    >>> readable_value("eth_src", 0x300000000324), readable_value("ipv4_dst", 0x0A000002), readable_value("udp_dst", 53)
    ('30:00:00:00:03:24', '10.0.0.2', 53)
    """
    if name in MAC_FIELDS:
        return mac_to_str(value)
    if name in IPV4_FIELDS:
        return str(ipaddress.IPv4Address(value))
    if name in IPV6_FIELDS:
        return str(ipaddress.IPv6Address(value))
    return value


@lru_cache(maxsize=65536)
def ipv4_number(text: str) -> int:
    """An IPv4 address written as text, as a match value; remembered, because the same few addresses
    are parsed for every new flow and on every API change. Raises ``ValueError`` for anything else.

    >>> ipv4_number("10.0.0.2")
    167772162
    """
    return int(ipaddress.IPv4Address(text))


@lru_cache(maxsize=65536)
def ipv6_number(text: str) -> int:
    """An IPv6 address written as text, as a match value (``ipv4_number``'s twin).

    >>> hex(ipv6_number("fd00::2"))
    '0xfd000000000000000000000000000002'
    """
    return int(ipaddress.IPv6Address(text))


def match(**fields: int | tuple[int, int]) -> Match:
    """Build a canonical match; a ``(value, mask)`` tuple makes a masked field.

    >>> match(in_port=3, eth_src=(0x1 << 44, 0xF << 44))
    (('eth_src', 17592186044416, 263882790666240), ('in_port', 3, None))
    """
    items: list[tuple[str, int, int | None]] = []
    for name, value in fields.items():
        if isinstance(value, tuple):
            items.append((name, value[0], value[1]))
        else:
            items.append((name, value, None))
    return tuple(sorted(items))


def extended(base: Match, **fields: int | tuple[int, int]) -> Match:
    """``base`` with ``fields`` added (a field already in ``base`` takes the new value).

    >>> extended(match(in_port=3), udp_dst=5001)
    (('in_port', 3, None), ('udp_dst', 5001, None))
    """
    kept: dict[str, int | tuple[int, int]] = {
        name: (value if mask is None else (value, mask)) for name, value, mask in base
    }
    return match(**{**kept, **fields})


def match_fields(fields: Match) -> dict[str, tuple[int, int | None]]:
    """A match as ``{field: (value, mask)}``, for looking fields up by name.

    >>> match_fields(match(in_port=3, udp_dst=(5000, 0xFFF8)))
    {'in_port': (3, None), 'udp_dst': (5000, 65528)}
    """
    return {name: (value, mask) for name, value, mask in fields}


class Kind(IntEnum):
    """What an entry is for; stored in the top byte of its cookie."""

    CONTROL = 1  # LLDP and ARP to the controller
    PORT = 2  # which pipeline a port's frames take
    SECURITY = 3  # drop forged headers from host ports
    DECODE = 4  # read the next port from the header
    CHAIN = 5  # classify and encapsulate a chain's traffic
    ROUTE = 6  # default routes to hosts
    RESTORE = 7  # restore the original frame at the egress edge
    DELIVER = 8  # hand frames to local hosts
    MISS = 9  # counted drops of everything else
    FLOW = 10  # one flow's path, installed reactively on its first packet
    STREAM = 11  # a time-sensitive stream's path and traffic class, at its talker's edge
    PROXY = 12  # strip the header before an SR-unaware service function (one entry per function port)
    ANSWER = 13  # ARP for a known host answered at the edge; its copy to the controller is not answered again


_KINDS = {int(kind): kind for kind in Kind}


def cookie(kind: Kind, owner: int = 0) -> int:
    return (int(kind) << 56) | (owner & 0xFFFFFFFFFFFF)


def kind_of(cookie_value: int) -> Kind | None:
    """The kind a cookie names, or None (an entry srfabric did not make).

    >>> kind_of(cookie(Kind.ANSWER, 7)), kind_of(0xEE << 56)
    (<Kind.ANSWER: 13>, None)
    """
    return _KINDS.get(cookie_value >> 56)  # a dict, not Kind(value): a sync asks for every entry it sends


@dataclass(frozen=True)
class Output:
    port: int


@dataclass(frozen=True)
class OutputBits:
    """Output to the port number held in ``nbits`` bits of ``field`` starting at bit ``ofs``."""

    field: str
    ofs: int
    nbits: int


@dataclass(frozen=True)
class LoadBits:
    field: str
    ofs: int
    nbits: int
    value: int


@dataclass(frozen=True)
class MoveBits:
    src: str
    src_ofs: int
    dst: str
    dst_ofs: int
    nbits: int


@dataclass(frozen=True)
class SetField:
    field: str
    value: int


@dataclass(frozen=True)
class PushVlan:
    ethertype: int = 0x8100


@dataclass(frozen=True)
class PopVlan:
    pass


@dataclass(frozen=True)
class PushMpls:
    ethertype: int = 0x8847


@dataclass(frozen=True)
class PopMpls:
    ethertype: int = 0x0800


@dataclass(frozen=True)
class SetMplsTtl:
    ttl: int


@dataclass(frozen=True)
class ToController:
    pass


@dataclass(frozen=True)
class SetQueue:
    """Send the frame's later outputs through egress queue ``queue_id`` (on Linux: skb priority)."""

    queue_id: int


@dataclass(frozen=True)
class Group:
    """Hand the packet to group ``group_id`` (its buckets each act on their own copy)."""

    group_id: int


@dataclass(frozen=True)
class Meter:
    """Pass the frame through meter ``meter_id`` first: ``rate_pps`` frames a second with a bucket of ``burst``
    frames, anything over dropped (OpenFlow 1.3's meter instruction; always an entry's first action here). The
    meter's settings ride with the entry, so an entry's digest changes with them and a sync sets the meter before
    the entry that uses it (``controller.reconcile``)."""

    meter_id: int
    rate_pps: int
    burst: int

    def __post_init__(self) -> None:
        for name, value, top in (("meter_id", self.meter_id, MAX_METER_ID), ("rate_pps", self.rate_pps, U32_MAX),
                                 ("burst", self.burst, U32_MAX)):
            if not 1 <= value <= top:
                raise ModelError(f"meter.{name}", f"must be in 1..{top}, got {value}")


Action = (
    Output
    | OutputBits
    | LoadBits
    | MoveBits
    | SetField
    | PushVlan
    | PopVlan
    | PushMpls
    | PopMpls
    | SetMplsTtl
    | ToController
    | SetQueue
    | Group
    | Meter
)


@dataclass(frozen=True, slots=True)
class FlowEntry:
    """One flow entry. No actions and no ``goto`` means drop (the entry still counts).

    Slotted: a reactive controller keeps one per flow, tens of thousands, and the
    garbage collector walks each one it finds young.
    """

    table: int
    priority: int
    match: Match
    actions: tuple[Action, ...] = ()
    goto: int | None = None
    cookie: int = 0
    idle_timeout: int = 0  # seconds without a packet before the switch removes it and says so; 0: never
    _digest: int | None = field(default=None, init=False, repr=False, compare=False)  # ``digest``, once worked out

    @property
    def kind(self) -> Kind | None:
        return kind_of(self.cookie)

    @property
    def key(self) -> EntryKey:
        """What identifies the entry inside a switch (OpenFlow's strict match)."""
        return self.table, self.priority, self.match

    @property
    def digest(self) -> int:
        """CRC-32 of the whole entry's text: the same in every process (``hash`` is salted per process).

        Kept once worked out (the entry is frozen): every sync compares a switch's entries by it. The
        actions' text is kept per action list, which many entries share (every reactive flow of a route).
        """
        if self._digest is None:
            digest = DigestParts.of(self.table, self.priority, self.actions, self.goto, self.cookie).digest(self.match)
            object.__setattr__(self, "_digest", digest)
            return digest
        return self._digest


@dataclass(frozen=True)
class DigestParts:
    """An entry digest's text but for the match, as a CRC of what comes before it and the bytes after it:
    entries made by the thousand that differ only in their match (reactive flows) share one.

    >>> parts = DigestParts.of(1, 100, (), None, 0)
    >>> e = FlowEntry(1, 100, match(in_port=3))
    >>> parts.digest(e.match) == zlib.crc32(f"1 100 {e.match!r} () None 0".encode()) == e.digest
    True
    """

    before: int
    after: bytes

    @staticmethod
    def of(table: int, priority: int, actions: tuple[Action, ...], goto: int | None, cookie: int) -> DigestParts:
        return DigestParts(zlib.crc32(f"{table} {priority} ".encode()),
                           f" {_actions_text(actions)} {goto} {cookie}".encode())

    def digest(self, fields: Match, text: str | None = None) -> int:
        """The digest of the entry with match ``fields``, whose ``repr`` the caller may have written (``text``)."""
        return zlib.crc32(self.after, zlib.crc32((repr(fields) if text is None else text).encode(), self.before))

    def entry(self, table: int, priority: int, fields: Match, actions: tuple[Action, ...], cookie: int,
              idle_timeout: int, text: str | None = None) -> FlowEntry:
        """The entry (without ``goto``) these parts were made for, with ``fields`` as its match and its digest
        already kept; ``text``, if given, must be ``repr(fields)``."""
        made = FlowEntry(table, priority, fields, actions, None, cookie, idle_timeout)
        object.__setattr__(made, "_digest", self.digest(fields, text))  # as ``FlowEntry.digest`` keeps it
        return made


@lru_cache(maxsize=4096)
def _actions_text(actions: tuple[Action, ...]) -> str:
    return repr(actions)


@dataclass(frozen=True)
class Bucket:
    """One bucket of a group: its share of flows (select groups) and what it does to its copy."""

    actions: tuple[Action, ...]
    weight: int = 0


@dataclass(frozen=True)
class GroupEntry:
    """An OpenFlow group: ``select`` sends each flow through one bucket by weight (the switch's own
    5-tuple hash picks it), ``all`` through every bucket, ``indirect`` through its one bucket (actions that
    many entries share and one group-mod changes)."""

    group_id: int
    type: str
    buckets: tuple[Bucket, ...]
