"""Parallel iperf3 sessions between two namespaces, one server and one client per flow.

As in the container-chaining study, N flows are N independent iperf3 pairs on
different ports, and the result is the sum of what the receivers report.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass

from srfabric.errors import SrfabricError
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.testbed.traffic import load_report

BASE_PORT = 5201


@dataclass(frozen=True)
class Traffic:
    """What one measurement sends."""

    protocol: str = "tcp"  # tcp | udp
    flows: int = 1
    seconds: float = 10.0
    length: int | None = None  # bytes per write (UDP: datagram payload)
    zerocopy: bool = False
    bitrate: str = "0"  # UDP: 0 sends as fast as it can

    def client_args(self, server_ip: str, port: int) -> list[str]:
        """The iperf3 client command for one flow.

        >>> Traffic("udp", length=64, seconds=2).client_args("10.0.0.2", 5201)
        ['iperf3', '-c', '10.0.0.2', '-p', '5201', '-t', '2', '--json', '-u', '-b', '0', '-l', '64']
        """
        args = ["iperf3", "-c", server_ip, "-p", str(port), "-t", f"{self.seconds:g}", "--json"]
        if self.protocol == "udp":
            args += ["-u", "-b", self.bitrate]
        if self.length is not None:
            args += ["-l", str(self.length)]
        if self.zerocopy:
            args.append("-Z")
        return args


@dataclass(frozen=True)
class Measured:
    bits_per_second: float
    packets_per_second: float
    retransmits: int
    lost_percent: float


def parse_client_json(output: str, traffic: Traffic) -> Measured:
    """The receiver's side of one iperf3 client's JSON report."""
    end = load_report(output)["end"]
    received = end["sum_received"]
    bps = float(received["bits_per_second"])
    if traffic.protocol == "udp":
        length = traffic.length or 1460
        summary = end["sum"]
        return Measured(bps, bps / 8 / length, 0, float(summary.get("lost_percent", 0.0)))
    return Measured(bps, 0.0, int(end["sum_sent"].get("retransmits", 0)), 0.0)


ATTEMPTS = 5
HANG_S = 10.0  # past its run's length, a client that has not ended is hung (its end-of-test exchange lost): rerun
SETTLE_S = 1.0  # between attempts: the failed run's queues drain before the next one sets up its streams


def measure(lab: NetLab, client_ns: str, server_ns: str, server_ip: str, traffic: Traffic) -> Measured:
    """Run ``traffic.flows`` iperf3 pairs at once and sum what their receivers got.

    On a set-up that drops most packets, iperf3's own control connection can fail
    or hang. A UDP stream is set up by one datagram each way, never sent again
    (esnet/iperf#862), so another flow's flood can make its client fail with
    "unable to read from stream socket". Such a run is repeated, up to
    ``ATTEMPTS`` times with a pause between, before the error is reported.
    """
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _measure_once(lab, client_ns, server_ns, server_ip, traffic)
        except SrfabricError:
            if attempt == ATTEMPTS:
                raise
            time.sleep(SETTLE_S)
    raise AssertionError("unreachable")


def _measure_once(lab: NetLab, client_ns: str, server_ns: str, server_ip: str, traffic: Traffic) -> Measured:
    servers = []
    ports = [BASE_PORT + index for index in range(traffic.flows)]
    try:
        for port in ports:
            servers.append(lab.spawn(["iperf3", "-s", "-1", "-p", str(port)], ns=server_ns))
        for port in ports:
            lab.wait_listening(server_ns, port)
        clients = [lab.spawn(traffic.client_args(server_ip, port), ns=client_ns) for port in ports]
        results = []
        for client in clients:
            try:
                out, err = client.communicate(timeout=traffic.seconds + HANG_S)
            except subprocess.TimeoutExpired:
                # An unlimited UDP run can starve iperf3's end-of-test exchange and leave the client
                # waiting; the run is void and measured again.
                for hung in clients:
                    lab.stop(hung)
                raise SrfabricError("iperf3", f"client did not finish within {traffic.seconds + HANG_S:g} s") from None
            lab.stop(client)  # it has ended: the lab forgets it
            if client.returncode != 0 and not out:
                raise SrfabricError("iperf3", f"client exited {client.returncode}: {err.decode()[:300]}")
            results.append(parse_client_json(out.decode(), traffic))
    finally:
        for server in servers:
            lab.stop(server)
    return Measured(
        sum(r.bits_per_second for r in results),
        sum(r.packets_per_second for r in results),
        sum(r.retransmits for r in results),
        max(r.lost_percent for r in results),
    )
