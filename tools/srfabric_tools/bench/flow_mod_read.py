"""Flow-mods read fast enough for an emulated switch: the match decoded with ``struct`` (OpenFlow's basic OXM
fields), the instructions through os-ken once per distinct byte string. A reactive controller sends one
flow-mod per flow, each with a match of its own and instructions shared with every flow on the same path, so
the os-ken parse is paid per path, not per flow. A match with any other field class (Nicira's, say) is read
whole by ``parse_flow_mod``, as before."""

from __future__ import annotations

import struct

from srfabric.rules.entries import Action, FlowEntry, Match, match
from srfabric.rules.openflow.ofbind import DIGEST_MASK
from srfabric.rules.openflow.wire import HEADER
from srfabric.xdp.of_messages import FlowMod, parse_flow_mod

FIXED = struct.Struct("!QQBBHHHIIIH2x")  # cookie, cookie mask, table, command, idle, hard, priority, buffer,
MATCH_AT = HEADER.size + FIXED.size      # out port, out group, flags; then the ofp_match
EMPTY_MATCH = bytes.fromhex("0001000400000000")
OXM_BASIC = 0x8000
FIELDS = {0: "in_port", 3: "eth_dst", 4: "eth_src", 5: "eth_type", 6: "vlan_vid", 7: "vlan_pcp", 8: "ip_dscp",
          10: "ip_proto", 11: "ipv4_src", 12: "ipv4_dst", 13: "tcp_src", 14: "tcp_dst", 15: "udp_src",
          16: "udp_dst", 21: "arp_op", 22: "arp_spa", 23: "arp_tpa", 24: "arp_sha", 25: "arp_tha", 26: "ipv6_src",
          27: "ipv6_dst", 34: "mpls_label", 35: "mpls_tc"}
CACHED = 4096  # distinct instruction lists kept; past that the cache starts again


def oxm_match(raw: bytes) -> tuple[Match, int] | None:
    """A flow-mod's match and the bytes its ofp_match takes (padded); None when a field is not a basic one."""
    kind, length = struct.unpack_from("!HH", raw, MATCH_AT)
    if kind != 1 or length < 4 or MATCH_AT + length > len(raw):
        return None
    fields: dict[str, int | tuple[int, int]] = {}
    at, end = MATCH_AT + 4, MATCH_AT + length
    while at + 4 <= end:
        (header,) = struct.unpack_from("!I", raw, at)
        size, masked, name = header & 0xFF, header >> 8 & 1, FIELDS.get(header >> 9 & 0x7F)
        if header >> 16 != OXM_BASIC or name is None or at + 4 + size > end:
            return None
        body = raw[at + 4:at + 4 + size]
        half = size // 2 if masked else size
        value = int.from_bytes(body[:half], "big")
        fields[name] = (value, int.from_bytes(body[half:], "big")) if masked else value
        at += 4 + size
    return match(**fields), (length + 7) // 8 * 8


class FlowModReader:
    """Reads flow-mods, remembering the instructions it has read."""

    def __init__(self) -> None:
        self.instructions: dict[bytes, tuple[tuple[Action, ...], int | None, bool]] = {}

    def read(self, raw: bytes) -> FlowMod:
        """What ``parse_flow_mod`` gives for ``raw``; a malformed one raises ``DecodingError`` as it does."""
        found = oxm_match(raw) if len(raw) >= MATCH_AT + 8 else None
        if found is None:
            return parse_flow_mod(raw)
        fields, match_size = found
        cookie, _, table, command, idle, _, priority, *_ = FIXED.unpack_from(raw, HEADER.size)
        tail = raw[MATCH_AT + match_size:]
        known = self.instructions.get(tail)
        if known is None:
            bare = raw[:MATCH_AT] + EMPTY_MATCH + tail
            bare = bare[:2] + struct.pack("!H", len(bare)) + bare[4:]
            mod = parse_flow_mod(bare)
            known = (mod.entry.actions, mod.entry.goto, mod.complete)
            if len(self.instructions) >= CACHED:
                self.instructions.clear()
            self.instructions[tail] = known
        actions, goto, complete = known
        entry = FlowEntry(table, priority, fields, actions, goto, cookie & ~DIGEST_MASK, idle)
        return FlowMod(command, table, entry, complete)
