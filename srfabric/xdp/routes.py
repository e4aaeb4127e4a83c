"""A synthetic IPv4 routing table with the prefix-length mix of the public BGP table (pure, seeded).

The shares are rounded from published distributions of the global table:
about six in ten routes are /24s, the rest mostly /16../23, a few shorter
ones and almost none longer than /24.

Examples
--------
>>> table = route_table(1000, seed=1)
>>> len(table), len({prefix for prefix, _ in table})
(1000, 1000)
>>> sum(1 for prefix, _ in table if prefix.endswith("/24")) > 500
True
"""

from __future__ import annotations

import ipaddress
import random

PREFIX_SHARES = {
    8: 0.0002, 10: 0.0005, 11: 0.001, 12: 0.002, 13: 0.004, 14: 0.007, 15: 0.012, 16: 0.035,
    17: 0.016, 18: 0.026, 19: 0.045, 20: 0.048, 21: 0.055, 22: 0.11, 23: 0.10, 24: 0.5383,
}
PAPER_ROUTES = 380_000


def route_table(count: int, ports: int = 8, seed: int = 0) -> list[tuple[str, int]]:
    """``count`` distinct prefixes (``"a.b.c.d/len"``) in unicast space, each with a port 1..``ports``."""
    rng = random.Random(seed)
    lengths = list(PREFIX_SHARES)
    weights = list(PREFIX_SHARES.values())
    seen: set[tuple[int, int]] = set()
    table: list[tuple[str, int]] = []
    while len(table) < count:
        length = rng.choices(lengths, weights)[0]
        # First octet 1..223: unicast space, as in the global table.
        address = (rng.randrange(1, 224) << 24) | rng.getrandbits(24)
        network = address & (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
        if (network, length) in seen:
            continue
        seen.add((network, length))
        table.append((f"{ipaddress.IPv4Address(network)}/{length}", rng.randrange(1, ports + 1)))
    return table


def distinct_addresses_in(table: list[tuple[str, int]], count: int, seed: int = 0) -> list[str]:
    """``count`` different destination addresses, each inside a route drawn uniformly from ``table``."""
    space = sum(ipaddress.IPv4Network(prefix).num_addresses for prefix, _ in table)
    if count > space:
        raise ValueError(f"count: {count} is more than the {space} addresses the table covers")
    rng = random.Random(seed)
    picks: dict[str, None] = {}
    while len(picks) < count:
        network = ipaddress.IPv4Network(rng.choice(table)[0])
        picks[str(network.network_address + rng.randrange(network.num_addresses))] = None
    return list(picks)


def addresses_in(table: list[tuple[str, int]], count: int, seed: int = 0) -> list[str]:
    """``count`` destination addresses, each inside a random route of ``table``."""
    rng = random.Random(seed)
    picks = []
    for _ in range(count):
        network = ipaddress.IPv4Network(rng.choice(table)[0])
        picks.append(str(network.network_address + rng.randrange(network.num_addresses)))
    return picks
