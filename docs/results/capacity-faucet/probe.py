"""faucet under ``bench capacity``'s generator: what it sends back for new flows between hosts it has learned.

A probe, run by hand, not a benchmark: faucet 1.10 pins os-ken 3.1.0 and an older prometheus-client, so it needs
a venv of its own, which bootstrap does not make. Make one and run this from the repository's venv:

    python3 -m venv /tmp/faucet-venv && /tmp/faucet-venv/bin/pip install faucet==1.10.12
    .venv/bin/python docs/results/capacity-faucet/probe.py /tmp/faucet-venv/bin --out docs/results

The fabric is ``bench capacity``'s: the k=4 fat-tree of emulated switches (``srfabric.bench.of_emulator``), one
TCP connection each. faucet runs each switch as a learning switch on VLAN 100 (no stacking). Its packet-ins
are what its own pipeline would send: tagged with the VLAN, from its eth_src table, with its cookie, as an
action's, not a table miss's. Every host announces itself once (a gratuitous ARP); then new UDP flows between
random pairs of hosts arrive at each rate. The probe counts the messages faucet sends back in each phase.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import socket
import struct
import subprocess
import time
from pathlib import Path

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.bench.of_emulator import PACKET_IN_FIXED, EmulatedFabric, EmulatedSwitch, message
from srfabric.bench.output import machine, run_folder, write_json
from srfabric.controller.packets import ArpPacket
from srfabric.model.topo import fat_tree
from srfabric.southbound.wire import HEADER
from srfabric.xdp.frames import udp_frame

VLAN = 100
FAUCET_COOKIE = 0x5ADC15C0  # faucet's default ``cookie`` for the rules it installs
ETH_SRC_TABLE = 1  # faucet's eth_src table, in its pipeline with no ACLs
RATES = (1000, 10000)  # new flows a second, each for SECONDS
SECONDS = 3.0
MESSAGE_NAMES = {value: name[5:].lower() for name, value in vars(ofp).items()
                 if name.startswith("OFPT_") and isinstance(value, int)}
DESCRIPTION = b"".join(text.ljust(size, b"\0") for text, size in (
    (b"srfabric", 256), (b"emulated switch", 256), (b"0", 256), (b"0", 32), (b"0", 256)))


class CountingSwitch(EmulatedSwitch):
    """An emulated switch that counts what the controller sends by message type, and describes itself (faucet
    asks for OFPMP_DESC; ``bench capacity``'s switches answer it with an empty body)."""

    def __init__(self, fabric: EmulatedFabric, name: str, counts: collections.Counter[str]) -> None:
        super().__init__(fabric, name)
        self.counts, self.pending = counts, bytearray()

    def data_received(self, data: bytes) -> None:
        self.pending += data
        passed = bytearray()
        while len(self.pending) >= HEADER.size:
            _, kind, length, xid = HEADER.unpack_from(self.pending)
            if len(self.pending) < length:
                break
            msg, self.pending = bytes(self.pending[:length]), self.pending[length:]
            self.counts[MESSAGE_NAMES.get(kind, str(kind))] += 1
            if kind == ofp.OFPT_MULTIPART_REQUEST and struct.unpack_from("!H", msg, 8)[0] == ofp.OFPMP_DESC:
                self.write(message(ofp.OFPT_MULTIPART_REPLY, xid, struct.pack("!HH4x", ofp.OFPMP_DESC, 0)
                                   + DESCRIPTION))
            else:
                passed += msg
        super().data_received(bytes(passed))


def tagged_packet_in(in_port: int, frame: bytes) -> bytes:
    """``frame`` as faucet's pipeline sends it up: tagged, from its eth_src table, with its cookie."""
    tagged = frame[:12] + struct.pack("!HH", 0x8100, VLAN) + frame[12:]
    fixed = PACKET_IN_FIXED.pack(ofp.OFP_NO_BUFFER, len(tagged), ofp.OFPR_ACTION, ETH_SRC_TABLE, FAUCET_COOKIE,
                                 1, 12, 0x80000004, in_port, 0)
    return message(ofp.OFPT_PACKET_IN, 0, fixed + tagged)


def faucet_config(fabric: EmulatedFabric) -> str:
    lines = ["vlans:", f"  v{VLAN}:", f"    vid: {VLAN}", "dps:"]
    for name, switch in fabric.spec.switches.items():
        lines += [f"  {name}:", f"    dp_id: {switch.dpid}", '    hardware: "Open vSwitch"', "    interfaces:"]
        lines += [f"      {int.from_bytes(port[:4], 'big')}: {{native_vlan: v{VLAN}}}"
                  for port in fabric.port_desc(name)]
    return "\n".join(lines) + "\n"


def cpu_seconds(pid: int) -> float:
    """User and system time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def probe(fabric: EmulatedFabric, counts: collections.Counter[str], port: int,
                pid: int) -> list[dict[str, object]]:
    try:
        return await phases(fabric, counts, port, pid)
    finally:
        fabric.close()  # inside the loop: closing a transport schedules its callback


async def phases(fabric: EmulatedFabric, counts: collections.Counter[str], port: int,
                 pid: int) -> list[dict[str, object]]:
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + 60
    while not fabric.switches:
        try:
            for name in fabric.spec.switches:
                switch = CountingSwitch(fabric, name, counts)
                await loop.create_connection(lambda switch=switch: switch, "127.0.0.1", port)  # type: ignore[misc]
                fabric.switches[name] = switch
        except OSError:  # faucet not listening yet
            fabric.close()
            fabric.switches.clear()
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    await asyncio.wait_for(asyncio.gather(*(s.ready for s in fabric.switches.values())), 60)
    done: list[dict[str, object]] = []
    used = 0.0

    async def phase(name: str, offered: int, seconds: float) -> None:
        nonlocal used
        await asyncio.sleep(seconds)
        now = cpu_seconds(pid)
        done.append({"phase": name, "packet_ins": offered, "faucet_cpu_s": round(now - used, 3), **dict(counts)})
        used = now
        counts.clear()

    await phase("connect and configure", 0, 10.0)
    hosts = sorted(fabric.spec.hosts)
    for name in hosts:
        host = fabric.spec.hosts[name]
        arp = ArpPacket(1, host.mac, host.ip, 0, host.ip, host.mac, 0xFFFFFFFFFFFF).to_bytes()
        fabric.switches[host.switch].write(tagged_packet_in(host.port, arp))
    await phase("every host announces itself", len(hosts), 3.0)
    pick, sport = random.Random(1), 1024
    for rate in RATES:
        begin, sent = time.perf_counter(), 0
        while sent < rate * SECONDS:
            due = min(int(rate * (time.perf_counter() - begin)), int(rate * SECONDS)) - sent
            for _ in range(max(due, 0)):
                source, destination = (fabric.spec.hosts[h] for h in pick.sample(hosts, 2))
                sport = sport + 1 if sport < 65535 else 1024
                frame = udp_frame(destination.mac, source.mac, source.ip, destination.ip, sport, 5009)
                fabric.switches[source.switch].write(tagged_packet_in(source.port, frame))
            sent += max(due, 0)
            await asyncio.sleep(0.001)
        await phase(f"new flows at {rate}/s for {SECONDS:g} s", sent, 2.0)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("faucet_bin", help="the bin folder of a venv with faucet (and its osken-manager)")
    parser.add_argument("--out", default="docs/results")
    args = parser.parse_args()
    measured_on = machine()
    folder = run_folder(args.out, "capacity-faucet")
    fabric = EmulatedFabric(fat_tree(4))
    (folder / "faucet.yaml").write_text(faucet_config(fabric))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    env = dict(os.environ, PATH=f"{args.faucet_bin}:{os.environ['PATH']}", FAUCET_CONFIG=str(folder / "faucet.yaml"),
               FAUCET_LOG=str(folder / "faucet.log"), FAUCET_EXCEPTION_LOG=str(folder / "faucet-exceptions.log"),
               FAUCET_PROMETHEUS_ADDR="127.0.0.1", FAUCET_PROMETHEUS_PORT="0")
    version = subprocess.run([f"{args.faucet_bin}/pip", "show", "faucet"], capture_output=True, text=True,
                             check=True).stdout.split("Version: ")[1].split()[0]
    faucet = subprocess.Popen([f"{args.faucet_bin}/faucet", "--ryu-ofp-listen-host", "127.0.0.1",
                               "--ryu-ofp-tcp-listen-port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.STDOUT)
    try:
        counted = asyncio.run(probe(fabric, collections.Counter(), port, faucet.pid))
    finally:
        faucet.terminate()
        faucet.wait(10)
    summary = {"machine": measured_on, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "command": "python docs/results/capacity-faucet/probe.py FAUCET_VENV/bin --out docs/results",
               "faucet": version, "topology": "fat-tree k=4 (20 switches, 16 hosts), emulated", "phases": counted}
    write_json(folder / "summary.json", summary)
    print(json.dumps(counted, indent=1))
    print(f"results: {folder}")


if __name__ == "__main__":
    main()
