"""Traffic for the testbed: iperf3 clients and servers, parsed from their JSON output."""

from __future__ import annotations

import json
from dataclasses import dataclass

from srfabric.errors import SrfabricError


@dataclass(frozen=True)
class UdpResult:
    sent: int
    lost: int
    seconds: float

    @property
    def delivered(self) -> int:
        return self.sent - self.lost


@dataclass(frozen=True)
class TcpResult:
    bits_per_second: float
    retransmits: int


def iperf3_server_args(port: int) -> list[str]:
    return ["iperf3", "-s", "-1", "-p", str(port)]


def iperf3_udp_args(server: str, port: int, rate: str, seconds: float, length: int = 1000) -> list[str]:
    return ["iperf3", "-c", server, "-p", str(port), "-u", "-b", rate, "-l", str(length), "-t", str(seconds),
            "--json"]


def iperf3_tcp_args(server: str, port: int, seconds: float) -> list[str]:
    return ["iperf3", "-c", server, "-p", str(port), "-t", str(seconds), "--json"]


def load_report(output: str) -> dict:
    try:
        data = json.loads(output)
    except json.JSONDecodeError:
        raise SrfabricError("iperf3", f"output is not JSON: {output[:200]!r}") from None
    if "error" in data:
        raise SrfabricError("iperf3", str(data["error"]))
    return data


def parse_udp(output: str) -> UdpResult:
    """Packets the client sent and the server reported lost."""
    total = load_report(output)["end"]["sum"]
    return UdpResult(int(total["packets"]), int(total["lost_packets"]), float(total["seconds"]))


def parse_tcp(output: str) -> TcpResult:
    end = load_report(output)["end"]
    return TcpResult(float(end["sum_received"]["bits_per_second"]), int(end["sum_sent"].get("retransmits", 0)))
