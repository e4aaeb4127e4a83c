"""Render the demo report as tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def print_report(report: dict[str, Any]) -> None:
    console = Console()
    chains = Table(title=f"Service chains ({report['codec']} header, {report['topology']})")
    for column in ("chain", "classifier", "sent", "delivered", "%", "packets seen per function (in order)",
                   "functions outside the chain"):
        chains.add_column(column)
    for chain in report["chains"]:
        hops = "  ".join(f"{h['vnf']}:{h['packets']}" for h in chain["hops"])
        outside = sum(chain["other_vnfs"].values())
        chains.add_row(chain["name"], chain["classifier"], str(chain["sent"]), str(chain["delivered"]),
                       f"{chain['delivered_pct']:.2f}", hops, f"{outside} packets")
    console.print(chains)
    switches = Table(title="Flow entries per switch")
    for column in ("switch", "role", "decode", "chain", "routes", "total", "forged drops"):
        switches.add_column(column)
    for sw in report["switches"]:
        switches.add_row(sw["name"], sw["role"], str(sw["decode_entries"]), str(sw["chain_entries"]),
                         str(sw["route_entries"]), str(sw["total_entries"]), str(sw["forged_drops"]))
    console.print(switches)
    console.print("timings (s): " + ", ".join(f"{k}={v}" for k, v in report["timings_s"].items()))
