"""``srfabric bench failover`` (its take-over part): how long a controller pair needs to take over from a
killed leader, and what the data plane loses meanwhile.

Two ``srfabric serve`` instances share a throwaway PostgreSQL cluster; the
small line fabric (h1 - s1 - s2 - s3 - h2, four functions) runs in Mininet on
Open vSwitch with every switch connected to both. 100 chains are made through
the leader's API. Then, ``kills`` times: UDP runs on one chain at 1,000
frames/s (numbered), the leader gets SIGKILL a second in, and the survivor is
asked for a write (a flow classifier) every 20 ms until it answers: the
take-over time is from the kill to that answer. The frames the receiver lacks
are counted, every switch's table is compared with what it held before the
kill, and entries younger than the kill (sent again) are counted. The killed
instance is started again (it follows) and the switches reconnect to it
before the next kill, which takes the new leader.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from srfabric.cli.client import ApiFailure, SfcClient
from srfabric.errors import SrfabricError
from srfabric_tools.testbed.api_chains import create_chains, make_groups
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec, postgres_cluster

CHAINS = 100
PPS = 1000
CHAIN_PORT = 31000
SEND = """
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
start = time.time()
n = 0
while n < {count}:
    s.sendto(struct.pack("!Id", n, time.time()) + b"x" * 52, ("{dst}", {port})); n += 1
    time.sleep(max(0.0, start + n / {rate} - time.time()))
open("{out}", "w").write(str(n))
"""
RECEIVE = """
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("0.0.0.0", {port}))
s.settimeout(3)
seen = []
try:
    while True:
        seen.append(struct.unpack_from("!Id", s.recv(2048))[0])
except OSError:
    pass
open("{out}", "w").write(" ".join(map(str, seen)))
"""


class Traffic:
    """Numbered UDP frames from h1 to h2 on the first chain; ``lost()`` once both ends are done."""

    def __init__(self, lab: ApiLab, seconds: float, name: str) -> None:
        self.received, self.sent = lab.workdir / f"{name}.received", lab.workdir / f"{name}.sent"
        receive, send = lab.workdir / f"{name}-receive.py", lab.workdir / f"{name}-send.py"
        receive.write_text(RECEIVE.format(port=CHAIN_PORT, out=self.received))
        send.write_text(SEND.format(count=int(seconds * PPS), rate=PPS, dst=lab.spec.hosts["h2"].ip, port=CHAIN_PORT,
                                    out=self.sent))
        lab.cmd("h2", f"python3 {receive} &")
        lab.wait_listening("h2", CHAIN_PORT)
        lab.cmd("h1", f"python3 {send} &")

    def missing(self, timeout: float = 30.0) -> tuple[list[int], int]:
        """(the numbers of the frames lost, in order; frames sent)."""
        deadline = time.monotonic() + timeout
        while not (self.received.exists() and self.sent.exists()):
            if time.monotonic() > deadline:
                raise SrfabricError("traffic", "the sender or the receiver did not finish")
            time.sleep(0.2)
        total = int(self.sent.read_text())
        seen = {int(n) for n in self.received.read_text().split()}
        return sorted(set(range(total)) - seen), total

    def lost(self, timeout: float = 30.0) -> tuple[int, int]:
        """(frames lost, frames sent)."""
        missing, total = self.missing(timeout)
        return len(missing), total


def write_once(client: SfcClient, port: int) -> None:
    client.create("flow_classifiers", {"protocol": "udp", "destination_port_range_min": port,
                                       "destination_port_range_max": port})


def first_write(url: str, token: str, port: int, since: float, timeout: float = 30.0) -> float:
    """Seconds from ``since`` until the instance at ``url`` takes a write (it redirects while it follows; the
    old leader's address refuses connections)."""
    while True:
        with SfcClient(url, token, timeout=5) as client:
            try:
                write_once(client, port)
                return time.monotonic() - since
            except (ApiFailure, SrfabricError):
                if time.monotonic() - since > timeout:
                    raise SrfabricError("take-over", f"no write taken within {timeout} s of the kill") from None
        time.sleep(0.02)


def entries_younger_than(lab: ApiLab, seconds: float) -> int:
    """Entries, over every switch, installed less than ``seconds`` ago."""
    young = 0
    for name in lab.spec.switches:
        dump = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", name], capture_output=True, text=True,
                              check=True).stdout
        young += sum(float(age) < seconds for age in re.findall(r"duration=([0-9.]+)s", dump))
    return young


def wait_connected(serve: ServeProcess, switches: int, timeout: float = 30.0, poll: float = 0.2) -> float:
    """Until every switch is connected to ``serve`` (Open vSwitch backs off up to 8 s between attempts), asking
    every ``poll`` seconds; the monotonic time it first was."""
    deadline = time.monotonic() + timeout
    with serve.client() as client:
        while True:
            found = client.get("/v2.0/srfabric/fabric")["fabric"]["switches"]
            if sum(s["connected"] for s in found) == switches:
                return time.monotonic()
            if time.monotonic() > deadline:
                raise SrfabricError("reconnect", f"switches not connected to {serve.url} within {timeout} s")
            time.sleep(poll)


def kill_once(lab: ApiLab, leader: ServeProcess, survivor: ServeProcess, number: int) -> dict[str, Any]:
    traffic = Traffic(lab, 3.0, f"kill{number}")
    time.sleep(1.0)
    before = lab.dump_flows()
    leader.kill()
    killed = time.monotonic()
    took = first_write(survivor.url, survivor.token, 40000 + number, killed)
    lost, sent = traffic.lost()
    time.sleep(0.5)  # a sync that would change anything has run by now
    return {"kill": number, "takeover_s": round(took, 4), "lost": lost, "sent": sent,
            "tables_as_before": lab.dump_flows() == before,
            "entries_sent_again": entries_younger_than(lab, time.monotonic() - killed)}


def run_kills(kills: int, progress: Any = print) -> list[dict[str, Any]]:
    rows = []
    with postgres_cluster() as url, ServeProcess(url) as first, ServeProcess(url) as second, \
            ApiLab(line_spec(4), first, others=[second]) as lab:
        with first.client() as client:
            create_chains(client, lab, make_groups(client, lab), CHAINS, CHAIN_PORT)
        wait_connected(second, len(lab.spec.switches))
        leader, survivor = first, second
        for number in range(1, kills + 1):
            row = kill_once(lab, leader, survivor, number)
            progress(f"kill {number}: writes taken again after {row['takeover_s']} s, {row['lost']} of "
                     f"{row['sent']} frames lost, tables as before: {row['tables_as_before']}")
            rows.append(row)
            leader.start()  # it follows now
            wait_connected(leader, len(lab.spec.switches))
            leader, survivor = survivor, leader
    return rows


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    times = sorted(r["takeover_s"] for r in rows)
    return {"kills": len(rows), "takeover_s_median": round(statistics.median(times), 4),
            "takeover_s_max": times[-1], "frames_lost": sum(r["lost"] for r in rows),
            "frames_sent": sum(r["sent"] for r in rows),
            "tables_as_before": all(r["tables_as_before"] for r in rows),
            "entries_sent_again": sum(r["entries_sent_again"] for r in rows),
            "chains": CHAINS, "frames_per_s": PPS}


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    from srfabric_tools.lab.plot import pyplot

    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4))
    ax.bar([r["kill"] for r in rows], [r["takeover_s"] * 1000 for r in rows])
    ax.axhline(2000, color="grey", linestyle="--", linewidth=0.8, label="2 s goal")
    ax.set(xlabel="kill", ylabel="SIGKILL to the first write taken (ms)",
           title=f"Leader take-over, {CHAINS} chains, {PPS} frames/s on one: "
                 f"{sum(r['lost'] for r in rows)} frames lost")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
