"""A switch's flow entries, as ``compile_fabric`` makes them for OVS, turned into XDP map contents.

The controller has one set of rule objects; this is the second back end. The
XDP programs hard-wire what every switch does alike (decode steps, security,
control traffic, misses), so only entries that differ per switch become map
entries: which ports are trusted (fabric and service-function ports run
``sr_fabric``, host ports run ``sr_host``), classifiers with the header to
write, restore and delivery. An entry the XDP switch cannot express is refused
with an error that names it.

A redundant stream (IEEE 802.1CB) has an entry at its talker's edge that hands
its R-TAG frames to a group of type all: its buckets become the tc replicator's
copies (``replicas``: each path's first port and header). Its delivery entry at
the listener's edge needs nothing: the egress edge eliminates the second copy
and delivers the first as any IPv4 frame.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from srfabric.errors import SrfabricError
from srfabric.rules.entries import (
    Action,
    FlowEntry,
    Group,
    GroupEntry,
    Kind,
    Output,
    PushMpls,
    PushVlan,
    SetField,
    SetMplsTtl,
    SetQueue,
    match_fields,
)
from srfabric.rules.pipeline import DELIVER, HOST_IN, IPV4_ETHERTYPE, IPV6_ETHERTYPE, PORT_IN, TERMINATE
from srfabric.rules.streams.frer import RTAG_ETHERTYPE
from srfabric.xdp import layout

# Fields of the classifier key, with their width in bits.
KEY_FIELDS = {"in_port": 16, "ipv4_src": 32, "ipv4_dst": 32, "ip_proto": 8,
              "tcp_src": 16, "tcp_dst": 16, "udp_src": 16, "udp_dst": 16}
BUILT_IN = {Kind.CONTROL, Kind.SECURITY, Kind.DECODE, Kind.MISS}
IN_AGENT = {Kind.ANSWER}  # the programs pass ARP up; the agent answers it from the flow table (``arp_answer``)
MAX_COPIES = 4  # bpf/frer_replicate.c


class XdpTableError(SrfabricError):
    """A flow entry has no XDP form."""


@dataclass
class XdpTables:
    """Map contents for one switch: keys and values already packed (``layout``)."""

    trusted_ports: set[int] = field(default_factory=set)
    actions: list[bytes] = field(default_factory=list)
    routes: dict[bytes, int] = field(default_factory=dict)
    wild: list[bytes] = field(default_factory=list)
    restore: dict[bytes, bytes] = field(default_factory=dict)
    deliver: dict[bytes, bytes] = field(default_factory=dict)
    # (in port, destination MAC) -> each copy's (first port, header as the source MAC), for the tc replicator
    replicas: dict[tuple[int, int], list[tuple[int, int]]] = field(default_factory=dict)

    def add_action(self, packed: bytes) -> int:
        self.actions.append(packed)
        return len(self.actions) - 1


def _name(entry: FlowEntry) -> str:
    return f"entry table={entry.table} priority={entry.priority} cookie={entry.cookie:#x}"


def header_action(entry: FlowEntry, actions: tuple[Action, ...]) -> bytes:
    """The ``sr_action`` for a classifier's actions: a header write and an output, or an output only."""
    if any(isinstance(a, SetQueue) for a in actions):
        raise XdpTableError(_name(entry), "chooses a queue: the XDP switch has no egress queues (nor gates); serve "
                                          "its fabric with --tt-queue -1")
    outputs = [a for a in actions if isinstance(a, Output)]
    if len(outputs) != 1 or actions[-1] != outputs[0]:
        raise XdpTableError(_name(entry), "needs exactly one output, as its last action")
    port = outputs[0].port
    sets = {a.field: a.value for a in actions if isinstance(a, SetField)}
    if len(actions) == 1:
        return layout.action(layout.ACT_OUTPUT, port)
    if set(sets) == {"eth_src"} and len(actions) == 2:
        return layout.action(layout.ACT_ENCAP, port, eth_src=sets["eth_src"])
    ttl = next((a.ttl for a in actions if isinstance(a, SetMplsTtl)), None)
    pushes = [a for a in actions if isinstance(a, PushVlan | PushMpls)]
    if set(sets) == {"vlan_vid", "mpls_label", "eth_dst"} and ttl is not None and len(pushes) == 2:
        mpls = (sets["mpls_label"] << 12) | (1 << 8) | ttl  # one label, bottom of stack
        return layout.action(layout.ACT_ENCAP, port, eth_dst=sets["eth_dst"], vlan_tci=sets["vlan_vid"] & 0x0FFF,
                             mpls=mpls)
    raise XdpTableError(_name(entry), f"actions {actions} are not a header write the XDP edge knows")


def wildcard_key(entry: FlowEntry, stage: int) -> tuple[bytes, bytes]:
    """The (value, mask) flow keys of a classifier match."""
    fields = match_fields(entry.match)
    eth_type = fields.pop("eth_type", (IPV4_ETHERTYPE, None))
    if eth_type != (IPV4_ETHERTYPE, None):
        raise XdpTableError(_name(entry), "the XDP edge classifies IPv4 only")
    values: dict[str, int] = {}
    masks: dict[str, int] = {}
    for name, (value, mask) in fields.items():
        if name not in KEY_FIELDS:
            raise XdpTableError(_name(entry), f"field {name} is not one the XDP classifier reads")
        full = (1 << KEY_FIELDS[name]) - 1
        values[name], masks[name] = value, full if mask is None else mask
    ports = [n for n in values if n.startswith(("tcp_", "udp_"))]
    if ports and "ip_proto" not in values:
        raise XdpTableError(_name(entry), "a transport port match needs ip_proto")

    def key(source: dict[str, int], stage_value: int) -> bytes:
        return layout.flow_key(
            src=source.get("ipv4_src", 0), dst=source.get("ipv4_dst", 0),
            sport=source.get("tcp_src", source.get("udp_src", 0)),
            dport=source.get("tcp_dst", source.get("udp_dst", 0)),
            proto=source.get("ip_proto", 0), stage=stage_value, in_port=source.get("in_port", 0),
        )

    return key(values, stage), key(masks, 0xFF)


def _resolved(entry: FlowEntry, groups: dict[int, GroupEntry]) -> tuple[tuple[Action, ...], int | None]:
    """An entry's actions, with an indirect group's bucket in place of the group; and that group's id."""
    if len(entry.actions) != 1 or not isinstance(entry.actions[0], Group):
        return entry.actions, None
    group_id = entry.actions[0].group_id
    group = groups.get(group_id)
    if group is None:
        raise XdpTableError(_name(entry), f"group {group_id} is not installed")
    check_group(group)
    if group.type != "indirect":
        raise XdpTableError(_name(entry), f"group {group_id} is a group of type {group.type}: a route or chain "
                                          "hands its frames to an indirect group (a shared header) only")
    return group.buckets[0].actions, group_id


def check_group(group: GroupEntry) -> None:
    """Refuse a group the XDP switch cannot hold: indirect groups of one bucket (a shared header), and groups of
    type all of 1 to ``MAX_COPIES`` buckets, each a header and an output (a redundant stream's copies)."""
    if group.type == "indirect" and len(group.buckets) == 1:
        return
    if group.type == "all" and 1 <= len(group.buckets) <= MAX_COPIES:
        for bucket in group.buckets:
            copy_of(f"group {group.group_id}", bucket.actions)
        return
    raise XdpTableError(f"group {group.group_id}", f"a {group.type} group of {len(group.buckets)} buckets has no "
                                                   f"XDP form (indirect groups of one bucket, or all groups of 1 "
                                                   f"to {MAX_COPIES} copies)")


def copy_of(name: str, actions: tuple[Action, ...]) -> tuple[int, int]:
    """A replicating bucket's (first port, header): it writes the source MAC (mac-nibble) and outputs, nothing
    else. XDP has no egress queues, so a time-triggered stream's ``set_queue`` is refused by name."""
    sets = [a for a in actions if isinstance(a, SetField)]
    if len(actions) == 2 and len(sets) == 1 and sets[0].field == "eth_src" and isinstance(actions[1], Output):
        return actions[1].port, sets[0].value
    raise XdpTableError(name, f"a copy's actions {actions} are not a source-MAC header and an output (the XDP "
                              "switch replicates mac-nibble streams of best-effort classes: it has no egress queues "
                              "for time-triggered ones)")


def replication(entry: FlowEntry, groups: dict[int, GroupEntry]) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """A redundant stream's entry at its talker's edge: (in port, destination MAC) and its copies."""
    fields = match_fields(entry.match)
    if set(fields) != {"eth_type", "in_port", "eth_dst"} or len(entry.actions) != 1 or not isinstance(
            entry.actions[0], Group):
        raise XdpTableError(_name(entry), "an R-TAG entry matches in_port and eth_dst and hands frames to a group")
    group = groups.get(entry.actions[0].group_id)
    if group is None or group.type != "all":
        raise XdpTableError(_name(entry), f"group {entry.actions[0].group_id} is not an installed group of type all")
    check_group(group)
    copies = [copy_of(f"group {group.group_id}", bucket.actions) for bucket in group.buckets]
    return (fields["in_port"][0], fields["eth_dst"][0]), copies


def xdp_tables(entries: Iterable[FlowEntry], groups: Iterable[GroupEntry] = ()) -> XdpTables:
    """Translate one switch's entries; the order of wildcard rules follows priority, highest first.

    Entries that hand frames to one indirect group share one action: the group's header.
    """
    tables = XdpTables()
    wild: list[tuple[int, bytes, bytes, int]] = []
    by_id = {group.group_id: group for group in groups}
    group_actions: dict[int, int] = {}  # group id -> its action's index
    for entry in entries:
        kind = entry.kind
        if kind in BUILT_IN or kind in IN_AGENT or kind is None and not entry.actions:
            continue
        fields = match_fields(entry.match)
        if fields.get("eth_type", (0, None))[0] == IPV6_ETHERTYPE:
            raise XdpTableError(_name(entry), "IPv6 is not in the XDP data plane (it forwards IPv4; a host's IPv6 "
                                              "frames are dropped, forged ones counted as such): run a dual-stack "
                                              "fabric on Open vSwitch")
        if fields.get("eth_type", (0, None))[0] == RTAG_ETHERTYPE:
            if kind == Kind.STREAM and entry.table == HOST_IN:
                key, copies = replication(entry, by_id)
                tables.replicas[key] = copies
                continue
            if kind == Kind.DELIVER and entry.table == DELIVER:
                continue  # eliminated at this edge, then delivered as IPv4 (sr_terminate)
        if entry.table == PORT_IN and kind == Kind.PORT:
            if "in_port" in fields:
                tables.trusted_ports.add(fields["in_port"][0])
            continue
        if kind in (Kind.CHAIN, Kind.ROUTE) and entry.table in (HOST_IN, TERMINATE, DELIVER) or (
                kind == Kind.STREAM and entry.table == HOST_IN):
            _add_steering(tables, entry, fields, by_id, group_actions, wild)
            continue
        if kind == Kind.RESTORE and entry.table == TERMINATE:
            if entry.actions:
                _add_restore(tables, entry, fields)
            continue
        if kind == Kind.DELIVER and entry.table == DELIVER:
            _add_delivery(tables, entry, fields)
            continue
        if kind == Kind.PROXY:
            raise XdpTableError(_name(entry), "the SR proxy (a port pair with correlation None) is not in the XDP "
                                              "data plane: give the port pair correlation mpls (an SR-aware "
                                              "function), or run the fabric on Open vSwitch")
        raise XdpTableError(_name(entry), f"kind {kind.name if kind else 'none'} in table {entry.table} "
                                          "has no XDP form")
    wild.sort(key=lambda rule: -rule[0])
    if len(wild) > layout.WILD_RULES:
        raise XdpTableError("wildcard rules", f"{len(wild)} classifier entries exceed the XDP table's "
                                              f"{layout.WILD_RULES}")
    tables.wild = [layout.wild_rule(value, mask, index) for _, value, mask, index in wild]
    return tables


Fields = dict[str, tuple[int, int | None]]


def _add_steering(tables: XdpTables, entry: FlowEntry, fields: Fields, by_id: dict[int, GroupEntry],
                  group_actions: dict[int, int], wild: list[tuple[int, bytes, bytes, int]]) -> None:
    """A chain's, a route's or a stream's entry: its header action (one per indirect group), then a host route in
    the hash table of routes or a wildcard rule."""
    actions, group_id = _resolved(entry, by_id)
    if group_id is None:
        index = tables.add_action(header_action(entry, actions))
    elif (index := group_actions.get(group_id, -1)) < 0:
        index = group_actions[group_id] = tables.add_action(header_action(entry, actions))
    destination = fields.get("ipv4_dst")
    # A host route (one unmasked destination, nothing else) goes to the hash table of routes, and so does the
    # route for everything else (no address: the gateway's), under address 0.
    if entry.table == HOST_IN and entry.kind == Kind.ROUTE and set(fields) <= {"eth_type", "ipv4_dst"} and (
            destination is None or destination[1] is None):
        tables.routes[layout.ipv4(destination[0] if destination else layout.EVERYTHING)] = index
        return
    stage = {HOST_IN: layout.STAGE_HOST_IN, TERMINATE: layout.STAGE_TERMINATE}.get(entry.table, layout.STAGE_DELIVER)
    value, mask = wildcard_key(entry, stage)
    wild.append((entry.priority, value, mask, index))


def _add_restore(tables: XdpTables, entry: FlowEntry, fields: Fields) -> None:
    """A restore entry: the source MAC put back for one IPv4 source (or all)."""
    source = fields.get("ipv4_src")
    sets = [a for a in entry.actions if isinstance(a, SetField) and a.field == "eth_src"]
    if len(sets) != 1 or set(fields) - {"eth_type", "ipv4_src"}:
        raise XdpTableError(_name(entry), "a restore entry sets eth_src for one ipv4_src (or all)")
    tables.restore[layout.ipv4(source[0] if source else layout.EVERYTHING)] = layout.mac_value(sets[0].value)


def _add_delivery(tables: XdpTables, entry: FlowEntry, fields: Fields) -> None:
    """A delivery entry: the destination MAC and the port of one IPv4 destination (or all)."""
    destination = fields.get("ipv4_dst")
    sets = [a for a in entry.actions if isinstance(a, SetField) and a.field == "eth_dst"]
    outputs = [a for a in entry.actions if isinstance(a, Output)]
    if len(sets) != 1 or len(outputs) != 1 or set(fields) - {"eth_type", "ipv4_dst"}:
        raise XdpTableError(_name(entry), "a delivery entry sets eth_dst and outputs for one ipv4_dst (or all)")
    tables.deliver[layout.ipv4(destination[0] if destination else layout.EVERYTHING)] = layout.host(
        sets[0].value, outputs[0].port)


