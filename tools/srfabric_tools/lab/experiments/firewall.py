"""Firewall VNFs (container-chaining study, Fig. 9-10): iptables rules in routing namespaces, and nftables."""

from __future__ import annotations

import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.iperf import Traffic
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.lab.plot import lines, pyplot, save
from srfabric_tools.lab.topologies import NamespaceChain, chain_gbps, namespace_chain
from srfabric_tools.lab.vnfs import iptables_restore, nft_ruleset, spread

Row = dict[str, Any]
UDP_SIZE = 1472
SPREAD_FLOWS = 4
SPREAD_RULES = 1000


def grid(settings: Settings) -> tuple[list[int], list[int], list[int], list[int]]:
    """Rule counts, flow counts, chain lengths for spreading, nftables rule counts."""
    if settings.quick:
        return [0, 100], [1], [3], [100]
    return [0, 100, 1000], [1, 4], [3, 5], [1000]


def count(settings: Settings) -> int:
    rules, flows, lengths, nft = grid(settings)
    single = (1 + 2 * len([r for r in rules if r])) * len(flows)
    return single + len(lengths) + 2 * len(nft)


def load_rules(lab: NetLab, ns: str, tool: str, rules: int, kind: str) -> None:
    text = iptables_restore(rules, kind) if tool == "iptables" else nft_ruleset(rules, kind)
    with tempfile.NamedTemporaryFile("w", suffix=".rules", delete=False) as handle:
        handle.write(text)
    try:
        if tool == "iptables":
            lab.run(["iptables-legacy-restore", handle.name], ns=ns)
        else:
            lab.run(["nft", "-f", handle.name], ns=ns)
    finally:
        Path(handle.name).unlink()


def flush_rules(lab: NetLab, ns: str) -> None:
    lab.run(["iptables-legacy", "-F", "FORWARD"], ns=ns, check=False)
    lab.run(["nft", "flush", "ruleset"], ns=ns, check=False)


def udp_gbps(ctx: Context, chain: NamespaceChain, flows: int) -> dict[str, float]:
    return chain_gbps(ctx.lab, chain, Traffic("udp", flows, ctx.settings.seconds, length=UDP_SIZE))


def run(ctx: Context) -> None:
    rule_counts, flow_counts, lengths, nft_counts = grid(ctx.settings)
    chain = namespace_chain(ctx.lab, 2)
    firewall = chain.forwarders[0]
    for flows in flow_counts:
        for rules in rule_counts:
            for kind in ("stateless", "stateful") if rules else ("none",):
                flush_rules(ctx.lab, firewall)
                if rules:
                    load_rules(ctx.lab, firewall, "iptables", rules, kind)
                ctx.repeat({"figure": "9", "tool": "iptables", "kind": kind, "rules": rules, "flows": flows,
                            "namespaces": 2}, partial(udp_gbps, ctx, chain, flows))
    flush_rules(ctx.lab, firewall)
    for rules in nft_counts:
        for kind in ("stateless", "stateful"):
            flush_rules(ctx.lab, firewall)
            load_rules(ctx.lab, firewall, "nftables", rules, kind)
            ctx.repeat({"figure": "9-nft", "tool": "nftables", "kind": kind, "rules": rules, "flows": SPREAD_FLOWS,
                        "namespaces": 2}, partial(udp_gbps, ctx, chain, SPREAD_FLOWS))
    ctx.lab.close()
    for n in lengths:
        chain = namespace_chain(ctx.lab, n)
        for ns, share in zip(chain.forwarders, spread(SPREAD_RULES, len(chain.forwarders)), strict=True):
            load_rules(ctx.lab, ns, "iptables", share, "stateful")
        ctx.repeat({"figure": "10", "tool": "iptables", "kind": "stateful", "rules": SPREAD_RULES,
                    "flows": SPREAD_FLOWS, "namespaces": n}, partial(udp_gbps, ctx, chain, SPREAD_FLOWS))
        ctx.lab.close()


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, axes = plt.subplots(1, 3, figsize=(15, 4))
    lines(axes[0], rows, "rules", lambda r: f"{r['kind']}, {r['flows']} flows",
          keep=lambda r: r["figure"] == "9" and r["kind"] != "none")
    for row in (r for r in rows if r["figure"] == "9" and r["kind"] == "none"):
        axes[0].axhline(row["median"], ls=":", color="0.5", lw=1)
    axes[0].set(title="Fig. 9: one iptables VNF (dotted: no rules)", xlabel="rules", ylabel="Gbit/s (UDP)")
    spread_rows = [r for r in rows if r["figure"] == "10" or (r["figure"] == "9" and r["kind"] == "stateful"
                                                              and r["rules"] == SPREAD_RULES
                                                              and r["flows"] == SPREAD_FLOWS)]
    lines(axes[1], spread_rows, "namespaces", lambda r: f"{r['rules']} stateful rules, {r['flows']} flows")
    axes[1].set(title="Fig. 10: rules spread over n - 1 VNFs", xlabel="namespaces in the chain (n)",
                ylabel="Gbit/s (UDP)")
    lines(axes[2], rows, "rules", lambda r: f"{r['tool']} {r['kind']}",
          keep=lambda r: r["flows"] == SPREAD_FLOWS and r["namespaces"] == 2 and r["kind"] != "none")
    axes[2].set(title="iptables vs nftables (not in the paper)", xlabel="rules", ylabel="Gbit/s (UDP)")
    save(figure, path, "paper: stateless beats stateful; 1000 rules cost about 50 % at 8 flows; spreading rules over "
                       "more namespaces costs more than it saves")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    out = []
    for flows in sorted({r["flows"] for r in rows if r["figure"] == "9"}):
        base = [r for r in rows if r["figure"] == "9" and r["flows"] == flows and r["kind"] == "none"]
        top = max((r["rules"] for r in rows if r["figure"] == "9"), default=0)
        if not base or not top:
            continue
        for kind in ("stateless", "stateful"):
            hit = [r for r in rows if r["figure"] == "9" and r["flows"] == flows and r["kind"] == kind
                   and r["rules"] == top]
            if hit:
                out.append(f"iptables {top} {kind} rules, {flows} flows: {hit[0]['median']:.2f} Gb/s, "
                           f"{hit[0]['median'] / base[0]['median']:.0%} of no rules (paper: about 50 % at 8 flows)")
    chain = sorted((r for r in rows if r["figure"] == "10"), key=lambda r: r["namespaces"])
    if chain:
        out.append("spread over n - 1 VNFs: " + ", ".join(f"n={r['namespaces']} {r['median']:.2f} Gb/s" for r in chain)
                   + " (paper: lower than one VNF with all rules)")
    return out


EXPERIMENT = Experiment(
    "firewall", "iptables (and nftables) firewall VNFs: rules, flows, and rules spread over a chain",
    "Fig. 9-10: stateless rules cost less than stateful; 1000 rules halve throughput at 8 flows; spreading "
    "the rules over more namespaces is slower than keeping them in one", count, run, plot, compare)
