"""faucet under ``bench capacity``'s generator and fat-tree, in the same run as srfabric: what it sends back for
new flows between hosts it has learned, and the CPU it spends on them.

faucet 1.10 runs in a venv of its own (``.venv-faucet``, pinned by ``faucet-constraints.txt``, made by the
bootstrap: it pins os-ken 3.1 and a prometheus-client of its own). It runs each emulated switch as a learning
switch on one VLAN (no stacking), on the CPU the other controllers under test get. The emulated switches send
packet-ins as faucet's own pipeline would: tagged with the VLAN, from its eth_src table, with its cookie (an
untagged table-miss packet-in is one faucet ignores). Every host announces itself once; then new UDP flows
between random pairs arrive at each rate, through the generator's own load loop. Each phase counts the
messages faucet sends back by type.

faucet sets up no flow of its own: it learns hosts and installs rules for them, so a flow between learned hosts
needs nothing from it. Its figure is therefore not a setup rate but the messages per new flow (0 expected) and
its CPU while the flows arrive.
"""

from __future__ import annotations

import asyncio
import collections
import os
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.errors import SrfabricError
from srfabric.model.topo import TopoSpec
from srfabric.rules.openflow.wire import HEADER
from srfabric_tools.bench.of_emulator import (
    FRAME_AT,
    PACKET_IN_FIXED,
    UDP_SPORT_AT,
    EmulatedFabric,
    EmulatedSwitch,
    message,
)
from srfabric_tools.bench.process_cpu import pin, process_cpu_s

FAUCET_VENV = Path(__file__).resolve().parents[3] / ".venv-faucet"
VLAN = 100
FAUCET_COOKIE = 0x5ADC15C0  # faucet's default ``cookie`` on the rules it installs
ETH_SRC_TABLE = 1  # faucet's eth_src table, in its pipeline without ACLs
VLAN_TAG = 4
QUIET_S = 1.0  # a phase is over once faucet has sent nothing for this long (echoes aside)
SETTLE_S = 60.0
MESSAGE_NAMES = {value: name[5:].lower() for name, value in vars(ofp).items()
                 if name.startswith("OFPT_") and isinstance(value, int)}


def tagged_packet_in(in_port: int, frame: bytes) -> bytes:
    """``frame`` as faucet's pipeline sends it up: tagged with the VLAN, from its eth_src table, with its cookie.

    >>> from srfabric_tools.bench.of_emulator import FRAME_AT
    >>> msg = tagged_packet_in(3, bytes(12) + b"\\x08\\x06" + bytes(28))
    >>> msg[FRAME_AT + 12:FRAME_AT + 16].hex()
    '81000064'
    """
    tagged = frame[:12] + struct.pack("!HH", 0x8100, VLAN) + frame[12:]
    fixed = PACKET_IN_FIXED.pack(ofp.OFP_NO_BUFFER, len(tagged), ofp.OFPR_ACTION, ETH_SRC_TABLE, FAUCET_COOKIE,
                                 1, 12, 0x80000004, in_port, 0)
    return message(ofp.OFPT_PACKET_IN, 0, fixed + tagged)


class CountingSwitch(EmulatedSwitch):
    """An emulated switch that counts what the controller sends it, by message type."""

    def __init__(self, fabric: FaucetFabric, name: str) -> None:
        super().__init__(fabric, name)
        self.counts, self.pending = fabric.counts, bytearray()

    def data_received(self, data: bytes) -> None:
        self.pending += data
        offset = 0
        while len(self.pending) - offset >= HEADER.size:
            _, kind, length, _ = HEADER.unpack_from(self.pending, offset)
            if len(self.pending) - offset < length:
                break
            self.counts[MESSAGE_NAMES.get(kind, str(kind))] += 1
            offset += length
        del self.pending[:offset]
        super().data_received(data)


class FaucetFabric(EmulatedFabric):
    """The generator's fabric, its packet-ins as faucet's pipeline sends them, its switches counting."""

    sport_at = FRAME_AT + VLAN_TAG + UDP_SPORT_AT

    def __init__(self, spec: TopoSpec) -> None:
        super().__init__(spec)
        self.counts: collections.Counter[str] = collections.Counter()

    def make_switch(self, name: str) -> EmulatedSwitch:
        return CountingSwitch(self, name)

    def packet_in_of(self, in_port: int, frame: bytes) -> bytes:
        return tagged_packet_in(in_port, frame)


def faucet_config(fabric: EmulatedFabric) -> str:
    """faucet's configuration: each switch of the fabric a learning switch, every port on the one VLAN.

    >>> from srfabric.model.topo import fat_tree
    >>> config = faucet_config(EmulatedFabric(fat_tree(4)))
    >>> config.count("dp_id:"), config.count("native_vlan: v100")
    (20, 80)
    """
    lines = ["vlans:", f"  v{VLAN}:", f"    vid: {VLAN}", "dps:"]
    for name, switch in fabric.spec.switches.items():
        lines += [f"  {name}:", f"    dp_id: {switch.dpid}", '    hardware: "Open vSwitch"', "    interfaces:"]
        lines += [f"      {int.from_bytes(port[:4], 'big')}: {{native_vlan: v{VLAN}}}"
                  for port in fabric.port_desc(name)]
    return "\n".join(lines) + "\n"


def faucet_version() -> str | None:
    """The faucet the bootstrap installed, or None when there is none."""
    if not (FAUCET_VENV / "bin" / "faucet").exists():
        return None
    done = subprocess.run([str(FAUCET_VENV / "bin" / "python"), "-c",
                           "import importlib.metadata as m; print(m.version('faucet'))"],
                          capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip() or None


async def phases(fabric: FaucetFabric, port: int, pid: int, rates: tuple[float, ...], seconds: float,
                 say: Any) -> list[dict[str, Any]]:
    """Connect, let faucet configure, announce the hosts, then new flows at each rate; a row per phase."""
    done: list[dict[str, Any]] = []
    used = process_cpu_s(pid)

    async def close(name: str, offered: int, began: float) -> None:
        nonlocal used
        now = process_cpu_s(pid)
        messages = dict(sorted(fabric.counts.items()))
        done.append({"phase": name, "packet_ins": offered, "seconds": round(time.monotonic() - began, 2),
                     "flow_mods": messages.get("flow_mod", 0), "packet_outs": messages.get("packet_out", 0),
                     "faucet_cpu_s": round(now - used, 3), "messages": messages})
        say(f"capacity faucet: {name}: {offered} packet-ins, {messages.get('flow_mod', 0)} flow-mods, "
            f"{messages.get('packet_out', 0)} packet-outs, {now - used:.2f} s of faucet's CPU")
        used = now
        fabric.counts.clear()

    async def settle() -> None:
        """Until faucet has sent nothing for ``QUIET_S`` (at most ``SETTLE_S``): what it sends late counts for
        the phase that made it send."""
        seen, since, began = -1, time.monotonic(), time.monotonic()
        while time.monotonic() - since < QUIET_S and time.monotonic() - began < SETTLE_S:
            total = sum(fabric.counts.values()) - fabric.counts["echo_request"]  # its keep-alives never stop
            if total != seen:
                seen, since = total, time.monotonic()
            await asyncio.sleep(0.1)

    began = time.monotonic()
    await fabric.connect(port, refused_for=60.0)  # faucet starts os-ken, which takes seconds to listen
    await settle()
    await close("connect and configure", 0, began)
    began = time.monotonic()
    fabric.announce_hosts()
    await settle()
    await close("every host announces itself", len(fabric.hosts), began)
    for rate in rates:
        began = time.monotonic()
        fabric.tally.sent.clear()
        await fabric.load(rate, seconds)
        offered = len(fabric.tally.sent)
        await settle()
        await close(f"new flows at {rate:g}/s for {seconds:g} s", offered, began)
    return done


def start_faucet(work: Path, port: int, controller_cpu: int | None) -> subprocess.Popen[bytes]:
    """faucet with ``work/faucet.yaml``, listening on ``port``, its logs and output in ``work``, on one CPU (None:
    where the scheduler puts it)."""
    # faucet execs os-ken's osken-manager, which it finds on PATH.
    env = dict(os.environ, PATH=f"{FAUCET_VENV / 'bin'}:{os.environ.get('PATH', '')}",
               FAUCET_CONFIG=str(work / "faucet.yaml"), FAUCET_LOG=str(work / "faucet.log"),
               FAUCET_EXCEPTION_LOG=str(work / "faucet-exceptions.log"), FAUCET_PROMETHEUS_ADDR="127.0.0.1",
               FAUCET_PROMETHEUS_PORT="0")
    with (work / "faucet.out").open("wb") as output:  # the child keeps its own copy of the descriptor
        faucet = subprocess.Popen([str(FAUCET_VENV / "bin" / "faucet"), "--ryu-ofp-listen-host", "127.0.0.1",
                                   "--ryu-ofp-tcp-listen-port", str(port)], env=env, stdout=output,
                                  stderr=subprocess.STDOUT)
    if controller_cpu is not None:
        pin(faucet.pid, controller_cpu)
    return faucet


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def measure_faucet(spec: TopoSpec, rates: tuple[float, ...], seconds: float, controller_cpu: int,
                         say: Any = print) -> dict[str, Any] | None:
    """faucet's phases under the generator, or None when the bootstrap installed no faucet."""
    version = faucet_version()
    if version is None:
        return None
    fabric = FaucetFabric(spec)
    config = faucet_config(fabric)
    with tempfile.TemporaryDirectory(prefix="srfabric-faucet-") as folder:
        work = Path(folder)
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        (work / "faucet.yaml").write_text(config)
        faucet = start_faucet(work, port, controller_cpu)
        try:
            rows = await phases(fabric, port, faucet.pid, rates, seconds, say)
        except OSError as error:
            said = (work / "faucet.out").read_text(errors="replace").strip().splitlines()[-3:]
            raise SrfabricError("faucet", f"it did not take the switches' connections ({error}; exit code "
                                          f"{faucet.poll()}): {' / '.join(said) or 'it printed nothing'}") from None
        finally:
            fabric.close()
            stop(faucet)
        log = work / "faucet-exceptions.log"
        errors = log.read_text() if log.exists() else ""
    flows = [row for row in rows if row["phase"].startswith("new flows")]
    return {"version": version, "config": config, "phases": rows, "exceptions": errors.strip(),
            "messages_per_new_flow": round(sum(r["flow_mods"] + r["packet_outs"] for r in flows)
                                           / max(sum(r["packet_ins"] for r in flows), 1), 4),
            "rule": "faucet runs each switch as a learning switch on one VLAN; the packet-ins are tagged, from its "
                    "eth_src table, with its cookie, as its pipeline sends them (bench/capacity_faucet.py)"}
