"""From one switch's measured message sizes to whole data centres (the paper's Fig. 9), and forwarding
state against chain length (Fig. 3). Pure: no I/O, only counting.

Fig. 9's reasoning: a new flow costs one packet-in upwards under both schemes;
downwards, source routing sends one flow-mod (to the ingress switch) and the
packet-out, while rule-based forwarding sends a flow-mod to every switch on the
path, a barrier to each switch past the first (so the first packet cannot
overtake its entries) and the packet-out. In a k-ary fat-tree a path between
two hosts crosses 1, 3 or 5 switches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from srfabric.rules.compile import compile_fabric
from srfabric.rules.entries import Kind
from srfabric_tools.lab.fabric_topos import chain_between, line

BARRIER_BYTES = 8  # an OpenFlow header and nothing else, each way


def fat_tree_switch_counts(k: int) -> dict[int, float]:
    """For a uniformly chosen pair of distinct hosts: switches on the path -> probability.

    >>> {n: round(p, 3) for n, p in fat_tree_switch_counts(4).items()}
    {1: 0.067, 3: 0.133, 5: 0.8}
    """
    half = k // 2
    others = k**3 // 4 - 1
    same_edge = half - 1
    same_pod = (half - 1) * half
    return {1: same_edge / others, 3: same_pod / others, 5: (others - same_edge - same_pod) / others}


@dataclass(frozen=True)
class MessageSizes:
    """Bytes of one message of each kind, as measured on the channel."""

    packet_in: int
    sr_flow_mod: int
    sr_packet_out: int
    rule_flow_mod: int
    rule_packet_out: int


def per_flow_bytes(sizes: MessageSizes, switches: float) -> dict[str, float]:
    """Control bytes for one new flow whose path crosses ``switches`` switches (a mean may be fractional).

    >>> per_flow_bytes(MessageSizes(100, 140, 110, 120, 100), 3)
    {'sr_up': 100, 'sr_down': 250, 'rules_up': 116, 'rules_down': 476}
    """
    later = switches - 1
    return {"sr_up": sizes.packet_in, "sr_down": sizes.sr_flow_mod + sizes.sr_packet_out,
            "rules_up": sizes.packet_in + BARRIER_BYTES * later,
            "rules_down": switches * sizes.rule_flow_mod + BARRIER_BYTES * later + sizes.rule_packet_out}


def fat_tree_overhead(sizes: MessageSizes, ks: list[int], flows_per_host_per_s: float = 1.0) -> list[dict[str, Any]]:
    """Fig. 9: control traffic of a whole fat-tree when every host starts ``flows_per_host_per_s`` flows."""
    rows = []
    for k in ks:
        mix = fat_tree_switch_counts(k)
        mean_switches = sum(n * p for n, p in mix.items())
        per_flow = per_flow_bytes(sizes, mean_switches)
        hosts = k**3 // 4
        rate = hosts * flows_per_host_per_s
        rows.append({
            "k": k, "switches": 5 * k * k // 4, "hosts": hosts, "mean_path_switches": round(mean_switches, 3),
            **{f"{key}_bytes_per_flow": round(value, 1) for key, value in per_flow.items()},
            "sr_total_mbps": round((per_flow["sr_up"] + per_flow["sr_down"]) * rate * 8 / 1e6, 3),
            "rules_total_mbps": round((per_flow["rules_up"] + per_flow["rules_down"]) * rate * 8 / 1e6, 3),
            "rules_over_sr": round((per_flow["rules_up"] + per_flow["rules_down"])
                                   / (per_flow["sr_up"] + per_flow["sr_down"]), 2),
        })
    return rows


def chain_state(lengths: list[int], switches: int = 5) -> list[dict[str, Any]]:
    """Fig. 3: entries that steer one chain of n functions, by scheme, on ``switches`` switches in a line.

    The functions spread evenly along the line (two per switch for 10), so a
    longer chain crosses more switches and more function ports. Source routing
    needs one entry per pathlet (a new header where the previous one is full).

    >>> [row["hop_by_hop"] for row in chain_state([1, 10])]
    [6, 15]
    """
    spec = line(switches, max(lengths))
    fabric = spec.to_fabric()
    rows = []
    for n in lengths:
        chain = chain_between(spec, "c", tuple(f"v{i}" for i in range(1, n + 1)), 1)
        row: dict[str, Any] = {"functions": n}
        for name, codec, steering in (("sr_mac_nibble", "mac-nibble", "source-routing"),
                                      ("sr_mac_vlan_mpls", "mac-vlan-mpls", "source-routing"),
                                      ("hop_by_hop", "mac-nibble", "hop-by-hop")):
            tables = compile_fabric(fabric, [chain], codec, steering=steering)
            row[name] = sum(1 for entries in tables.values() for e in entries if e.kind == Kind.CHAIN)
        rows.append(row)
    return rows
