"""What the study's VNFs do inside a namespace: firewall rules (iptables, nftables) and an HTB shaper.

Functions here only build text and argument lists; ``NetLab`` runs them.
"""

from __future__ import annotations

from srfabric.errors import ModelError

RULE_KINDS = ("stateless", "stateful")


def unused_address(index: int) -> str:
    """Addresses from the benchmarking block 198.18.0.0/15: no test traffic ever matches them."""
    return f"198.{18 + index // 65536}.{index // 256 % 256}.{index % 256}"


def iptables_restore(rules: int, kind: str) -> str:
    """An ``iptables-restore`` file with ``rules`` FORWARD rules that every packet is checked against.

    Stateless rules match an address nobody uses; stateful ones look up the
    connection-tracking state and count, without a verdict, so evaluation goes on.

    >>> print(iptables_restore(2, "stateless"))
    *filter
    :FORWARD ACCEPT [0:0]
    -A FORWARD -d 198.18.0.0/32 -j DROP
    -A FORWARD -d 198.18.0.1/32 -j DROP
    COMMIT
    <BLANKLINE>
    """
    if kind not in RULE_KINDS:
        raise ModelError("kind", f"{kind!r} is not one of {', '.join(RULE_KINDS)}")
    lines = ["*filter", ":FORWARD ACCEPT [0:0]"]
    for index in range(rules):
        if kind == "stateless":
            lines.append(f"-A FORWARD -d {unused_address(index)}/32 -j DROP")
        else:
            lines.append("-A FORWARD -m conntrack --ctstate NEW,ESTABLISHED,RELATED")
    return "\n".join([*lines, "COMMIT", ""])


def nft_ruleset(rules: int, kind: str) -> str:
    """The same rules for nftables, one rule each (no sets), in a forward-hook chain.

    >>> print(nft_ruleset(1, "stateful"))
    table ip lab {
     chain forward_filter {
      type filter hook forward priority 0; policy accept;
      ct state new,established,related counter
     }
    }
    <BLANKLINE>
    """
    if kind not in RULE_KINDS:
        raise ModelError("kind", f"{kind!r} is not one of {', '.join(RULE_KINDS)}")
    body = []
    for index in range(rules):
        if kind == "stateless":
            body.append(f"  ip daddr {unused_address(index)} drop")
        else:
            body.append("  ct state new,established,related counter")
    head = ["table ip lab {", " chain forward_filter {", "  type filter hook forward priority 0; policy accept;"]
    return "\n".join([*head, *body, " }", "}", ""])


def spread(total: int, parts: int) -> list[int]:
    """Split ``total`` rules over ``parts`` firewalls as evenly as possible.

    >>> spread(1000, 3)
    [334, 333, 333]
    """
    if parts < 1:
        raise ModelError("parts", f"must be at least 1, got {parts}")
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]


def htb_commands(device: str, rate: str = "1000gbit", burst: str = "64mb") -> list[list[str]]:
    """A hierarchical token bucket with one class that every packet goes through.

    The study set a 1 Tb/s hard limit and a large buffer, so the shaper works on every packet without
    ever holding traffic back.
    """
    return [
        ["tc", "qdisc", "add", "dev", device, "root", "handle", "1:", "htb", "default", "10"],
        ["tc", "class", "add", "dev", device, "parent", "1:", "classid", "1:1", "htb", "rate", rate, "ceil", rate,
         "burst", burst, "cburst", burst],
        ["tc", "class", "add", "dev", device, "parent", "1:1", "classid", "1:10", "htb", "rate", rate, "ceil", rate,
         "burst", burst, "cburst", burst],
    ]
