"""Per-stream filtering and policing as Linux ``tc`` commands on the ingress of the port a talker sends into.
A ``basic`` filter drops the stream's frames over its maximum SDU first (Linux's policer cannot hold an MTU under
256 octets: its rate table needs it); then a ``flower`` filter picks the stream's frames (802.1CB IP
identification), ``gate`` passes them only in the stream's windows (CLOCK_TAI, the port gates' base time and
cycle) and ``police`` holds them to the reserved rate and burst. Linux counts each one's drops apart: the first
filter's are the oversized frames, the gate's those outside the windows, the policer's those over the rate. The
size filter reads the UDP ports where an IPv4 header without options puts them, as the stream's talker sends.

Examples
--------
>>> from srfabric.tsn.protect.psfp import FlowMeter, GateInterval, Identity, StreamGate, StreamProtection
>>> gate = StreamGate(1_000_000, 2_000_000_000, (GateInterval(True, 30_000), GateInterval(False, 970_000)))
>>> plan = StreamProtection(9, "cam", "s1", "h1", Identity("10.0.0.1", "10.0.0.3", udp_dst=5001), 7, 200, gate,
...                         FlowMeter(1_776_000, 444))
>>> print("\\n".join(tc_commands([plan], "s1-eth1")))  # doctest: +NORMALIZE_WHITESPACE
tc qdisc replace dev s1-eth1 clsact
tc filter replace dev s1-eth1 ingress protocol ip pref 17 handle 17 basic match 'cmp(u32 at 12 layer network eq
 0x0a000001) and cmp(u32 at 16 layer network eq 0x0a000003) and cmp(u8 at 9 layer network eq 17) and cmp(u16 at 22
 layer network eq 5001) and cmp(u16 at 2 layer network gt 200)' action drop
tc filter replace dev s1-eth1 ingress protocol ip pref 18 handle 18 flower skip_hw src_ip 10.0.0.1 dst_ip 10.0.0.3
 ip_proto udp dst_port 5001 action gate clockid CLOCK_TAI base-time 2000000000 sched-entry open 30000 -1 -1
 sched-entry close 970000 -1 -1 action police rate 1776000bit burst 444 mtu 256 conform-exceed drop/ok
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from srfabric.errors import ModelError
from srfabric.tsn.protect.psfp import StreamProtection

MAX_HANDLE = 0x7FFF  # a filter's preference is 16 bits, and each stream takes two: 2 x handle - 1 and 2 x handle
MIN_POLICED_MTU = 256  # the policer's rate table needs a cell size over 0: an MTU of 256 octets at least
MAC_HEADER_AND_TAG = 18  # what the policer counts of a frame besides its SDU: the MAC header, and a tag


def tc_commands(plans: Sequence[StreamProtection], interface: str) -> list[str]:
    """The ingress hook of ``interface`` and one filter per plan (preference and handle: the stream's handle)."""
    commands = [f"tc qdisc replace dev {interface} clsact"]
    for plan in sorted(plans, key=lambda p: p.handle):
        if not 1 <= plan.handle <= MAX_HANDLE:
            raise ModelError(f"stream {plan.stream}", f"handle {plan.handle} is outside the 1..{MAX_HANDLE} tc's "
                                                      f"preferences leave")
        first = 2 * plan.handle - 1
        commands.append(f"tc filter replace dev {interface} ingress protocol ip pref {first} handle {first} basic "
                        f"match '{_oversize(plan)}' action drop")
        commands.append(" ".join([f"tc filter replace dev {interface} ingress protocol ip pref {first + 1} "
                                  f"handle {first + 1} flower skip_hw", _match(plan), _gate(plan), _police(plan)]))
    return commands


def _match(plan: StreamProtection) -> str:
    identity = plan.identity
    words = [f"src_ip {identity.ipv4_source} dst_ip {identity.ipv4_destination} ip_proto udp"]
    if identity.udp_src is not None:
        words.append(f"src_port {identity.udp_src}")
    if identity.udp_dst is not None:
        words.append(f"dst_port {identity.udp_dst}")
    if identity.destination_mac is not None:
        words.insert(0, f"dst_mac {identity.destination_mac.replace('-', ':').lower()}")
    return " ".join(words)


def _oversize(plan: StreamProtection) -> str:
    """An ematch for the stream's frames whose IPv4 total length (the SDU) is over its maximum."""
    identity = plan.identity
    terms = [f"cmp(u32 at 12 layer network eq 0x{_hex_ip(identity.ipv4_source)})",
             f"cmp(u32 at 16 layer network eq 0x{_hex_ip(identity.ipv4_destination)})",
             "cmp(u8 at 9 layer network eq 17)"]
    if identity.udp_src is not None:
        terms.append(f"cmp(u16 at 20 layer network eq {identity.udp_src})")
    if identity.udp_dst is not None:
        terms.append(f"cmp(u16 at 22 layer network eq {identity.udp_dst})")
    terms.append(f"cmp(u16 at 2 layer network gt {plan.max_sdu_bytes})")
    return " and ".join(terms)


def _hex_ip(address: str) -> str:
    return ipaddress.IPv4Address(address).packed.hex()


def _gate(plan: StreamProtection) -> str:
    entries = " ".join(f"sched-entry {'open' if interval.open else 'close'} {interval.duration_ns} -1 -1"
                       for interval in plan.gate.intervals)
    return f"action gate clockid CLOCK_TAI base-time {plan.gate.base_time_ns} {entries}"


def _police(plan: StreamProtection) -> str:
    """The meter (the size is the first filter's to check). The policer takes a frame over its ``mtu`` for an
    excess whatever the rate, and at ingress it counts the MAC header (and a tag) with the SDU."""
    meter = plan.meter
    mtu = max(MIN_POLICED_MTU, plan.max_sdu_bytes + MAC_HEADER_AND_TAG)
    return f"action police rate {meter.cir_bps}bit burst {meter.cbs_bytes} mtu {mtu} conform-exceed drop/ok"
