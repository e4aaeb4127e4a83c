"""Forwarding rate of one switch on a veth rig: generator -> switch -> sink.

    [generator] --veth-- (in) [switch under test] (out) --veth-- [sink]

The generator is BPF_PROG_TEST_RUN in live-frames mode running ``stamp_send``
(``bpf/generator.c``): it writes the frame's first bytes again and redirects
it into the rig. The two veth ends that receive (the switch's ingress and the
sink) use threaded NAPI, pinned so that the switch has a CPU of its own and
the generator and the sink share the other; otherwise all three would run one
after the other on the generator's CPU and the switch's own cost would be
hidden among theirs. The sink is an XDP program on the last
interface that counts and drops. The switch under test is an XDP program
attached to its ingress interface (``xdp_sr``, ``xdp_lpm``) or an Open vSwitch
userspace bridge holding the SR decode entries (``ovs_sr``) or one rule per
destination (``ovs_rules``). The rate is what reaches the sink per second.

A router's rate depends on where its frames go: one destination keeps the
trie walk and OVS's flow caches hot. So the generator also spreads the
frames' IPv4 destinations over ``SPREAD`` different addresses drawn uniformly
from the installed routes (``bpf/generator.c``), the same frames for every
switch; that is the headline, one destination a labelled extra.

On two CPUs that rig measures the rig: the generator and the sink share a CPU,
and both XDP switches deliver what the sink's share of it lets through. So
the XDP switches are also measured *direct*: the generator stamps each frame
and tail-calls the switch program itself (``stamp_switch``), whose redirect
really transmits to the sink, now on the other CPU. That is the switch's own
forwarding rate: its program, its redirect and the transmit into the veth.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from srfabric.codecs.mac_nibble import MacNibbleCodec
from srfabric.errors import SrfabricError
from srfabric.rules.classify import prefix_match
from srfabric.rules.codec_rules import rules_for
from srfabric.rules.entries import FlowEntry, Output, match
from srfabric.southbound.ofctl_text import flow_text
from srfabric.xdp import frames, layout
from srfabric.xdp.bpf_syscall import prog_test_run
from srfabric.xdp.loader import LoadedObject, load
from srfabric.xdp.routes import addresses_in, distinct_addresses_in, route_table
from srfabric_tools.lab.netlab import OVS_DATAPATH, NetLab

SWITCHES = ("xdp_sr", "xdp_lpm", "ovs_sr", "ovs_rules")
DIRECT_SWITCHES = ("xdp_sr", "xdp_lpm")
OUT_PORT = 2  # the switch's egress towards the sink, as OpenFlow port and devmap key
CHUNK = 200_000  # frames per generator call: short enough to check the clock often
SPREAD = 65_536  # distinct destinations of the spread frames (the generator's map holds this many)


@dataclass(frozen=True)
class Rate:
    switch: str
    frame_bytes: int
    offered_pps: float
    delivered_pps: float
    mode: str = "rig"  # or "direct": the generator tail-calls the switch program
    destinations: int = 1  # distinct IPv4 destinations of the frames

    def row(self) -> dict[str, object]:
        return {"switch": self.switch, "mode": self.mode, "frame_bytes": self.frame_bytes,
                "destinations": self.destinations, "offered_pps": round(self.offered_pps),
                "delivered_pps": round(self.delivered_pps)}


def _ifindex(name: str) -> int:
    return int(Path(f"/sys/class/net/{name}/ifindex").read_text())


def napi_threads(device: str) -> list[int]:
    """Process ids of the kernel threads that run ``device``'s threaded NAPI (``napi/<device>-<id>``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if name.startswith(f"napi/{device}-"[:15]):
            found.append(int(entry.name))
    return found


def sr_frame(size: int) -> bytes:
    """A frame whose mac-nibble header sends it out of port ``OUT_PORT`` at the switch under test."""
    plain = frames.udp_frame(0x0E0000000000, 0x0A0000000001, "10.0.0.1", "10.0.0.2", size=size)
    return frames.with_source_mac(plain, MacNibbleCodec().encode([OUT_PORT, 1, 1]).eth_src)


def rig_frame(switch: str, size: int, destination: str) -> bytes:
    """What the generator sends through ``switch``: a source-routed frame to a source-routing switch (``xdp_sr``,
    ``ovs_sr``, ``ovs_sr_kernel``: the same frame on either datapath), a plain IPv4 one to ``destination`` for a
    router.

    >>> rig_frame("ovs_sr_kernel", 64, "10.1.1.1") == rig_frame("xdp_sr", 64, "10.9.9.9") == sr_frame(64)
    True
    >>> rig_frame("ovs_rules_kernel", 64, "10.1.1.1") == rig_frame("xdp_lpm", 64, "10.1.1.1") != sr_frame(64)
    True
    """
    if switch.split("_")[1] == "sr":
        return sr_frame(size)
    return frames.udp_frame(0x0E0000000000, 0x0A0000000001, "10.0.0.1", destination, size=size)


def live_frames_refusal(prog_fd: int) -> str | None:
    """Why this kernel will not run XDP programs on live frames (``BPF_F_TEST_XDP_LIVE_FRAMES``), the rig's
    generator; None when it does. Probed with one frame through ``prog_fd`` (the sink's program, which drops it)."""
    try:
        prog_test_run(prog_fd, bytes(64), repeat=1, live=True)
    except SrfabricError as refused:
        if not any(f"(errno {code})" in refused.message for code in (errno.EPERM, errno.EOPNOTSUPP, errno.EINVAL)):
            raise  # another failure is the rig's own, not the kernel saying no
        return (f"kernel {os.uname().release} refuses BPF_PROG_TEST_RUN with live frames, the rig's generator "
                f"({refused.message}); no rate is measured here (the kernel lab's kernel runs them)")
    return None


class RateRig:
    """The three-box rig; ``switch(...)`` puts one switch under test at a time."""

    def __init__(self, lab: NetLab, tag: str, routes: int, chunk: int = CHUNK) -> None:
        self.lab, self.chunk = lab, chunk
        self.tag = tag
        self.gen_if, self.in_if = lab.name("g"), lab.name("i")
        self.out_if, self.sink_if = lab.name("o"), lab.name("k")
        self.objects: list[LoadedObject] = []
        self.under_test: LoadedObject | None = None
        self.table = route_table(routes, ports=1)
        self.lpm_destination = addresses_in(self.table, 1)[0]
        self.spread_destinations = distinct_addresses_in(self.table, SPREAD)

    def __enter__(self) -> RateRig:
        self.lab.veth(None, self.gen_if, None, self.in_if)
        self.lab.veth(None, self.out_if, None, self.sink_if)
        cpus = sorted(os.sched_getaffinity(0))
        self.generator_cpu, self.switch_cpu = cpus[0], cpus[-1]
        self.generator = self._load("generator")
        self.generator.map("gen_port").update(layout.u32(0), layout.u32(_ifindex(self.gen_if)))
        destinations = self.generator.map("gen_dests")
        for index, address in enumerate(self.spread_destinations):
            destinations.update(layout.u32(index), socket.inet_aton(address))
        self.sink = self._load("sink")
        self._attach(self.sink_if, self.sink.program("count_drop"))
        self.refused = live_frames_refusal(self.sink.program_fd("count_drop"))
        return self

    def __exit__(self, *exc: object) -> None:
        for obj in self.objects:
            obj.unload()

    def _load(self, kind: str) -> LoadedObject:
        obj = load(kind, f"{self.tag}-{kind}")
        self.objects.append(obj)
        return obj

    def _attach(self, name: str, program: Path) -> None:
        self.lab.run(["ip", "link", "set", "dev", name, "xdpdrv", "pinned", str(program)])

    def _detach(self, name: str) -> None:
        self.lab.run(["ip", "link", "set", "dev", name, "xdpdrv", "off"], check=False)

    def frame_for(self, switch: str, size: int) -> bytes:
        return rig_frame(switch, size, self.lpm_destination)

    @contextmanager
    def switch(self, name: str, progress: Callable[[str], None]) -> Iterator[None]:
        """Put switch ``name`` between the generator and the sink for the duration of the block."""
        if name.startswith("xdp"):
            kind = "mac-nibble" if name == "xdp_sr" else "lpm"
            obj = self._load(kind)
            obj.add_port(OUT_PORT, _ifindex(self.out_if))
            if kind == "lpm":
                progress(f"filling the LPM table with {len(self.table)} routes")
                routes = obj.map("sr_lpm")
                for prefix, _ in self.table:
                    routes.update(layout.lpm_key(prefix), layout.u32(OUT_PORT))
            program = "sr_fabric" if kind == "mac-nibble" else "lpm_route"
            self._attach(self.in_if, obj.program(program))
            self.generator.map("gen_next").update(layout.u32(0), layout.u32(obj.program_fd(program)))
            self.under_test = obj
            try:
                yield
            finally:
                self.generator.map("gen_next").delete(layout.u32(0))
                self.under_test = None
                self._detach(self.in_if)
            return
        # "_kernel": Open vSwitch's kernel datapath (openvswitch.ko, in the kernel lab), else its userspace one.
        kernel = name.endswith("_kernel")
        bridge = self.lab.ovs_bridge(f"b{name[4:6]}{'k' if kernel else ''}",
                                     datapath="system" if kernel else OVS_DATAPATH)
        path = Path(f"/tmp/{self.tag}-flows.txt")
        try:
            # Without an XDP program of its own, the ingress veth needs NAPI (GRO) to take redirected frames.
            self.lab.run(["ethtool", "-K", self.in_if, "gro", "on"], check=False)
            self.lab.ovs_port(bridge, self.in_if, 1)
            self.lab.ovs_port(bridge, self.out_if, OUT_PORT)
            flows = self._ovs_flows(name)
            progress(f"installing {len(flows)} OpenFlow entries")
            path.write_text("\n".join(flows) + "\n")
            self.lab.run(["ovs-ofctl", "-O", "OpenFlow13", "del-flows", bridge])
            # One bundle: OVS commits every entry in one table version, 8 times as fast as one by one.
            self.lab.run(["ovs-ofctl", "-O", "OpenFlow13", "--bundle", "add-flows", bridge, str(path)])
            yield
        finally:
            path.unlink(missing_ok=True)
            self.lab.ovs_remove_bridge(bridge)
            self.lab.run(["ethtool", "-K", self.in_if, "gro", "off"], check=False)  # as an XDP switch finds it

    def _ovs_flows(self, name: str) -> list[str]:
        if name.startswith("ovs_sr"):
            steps = rules_for("mac-nibble").decode_steps()
            return [flow_text(FlowEntry(0, 100, m + (("in_port", 1, None),), a)) for m, a in steps]
        # Longest prefix first: the prefix length is the priority.
        return [flow_text(FlowEntry(0, int(prefix.partition("/")[2]),
                                    match(eth_type=0x0800, ipv4_dst=prefix_match(prefix)), (Output(OUT_PORT),)))
                for prefix, _ in self.table]

    def _pin_napi(self, direct: bool = False) -> None:
        """Pin the NAPI threads: switch ingress on its own CPU, sink with the generator (direct: the sink
        on the other CPU, since the switch then runs in the generator's loop)."""
        sink_cpu = self.switch_cpu if direct else self.generator_cpu
        for name, cpu in ((self.in_if, self.switch_cpu), (self.sink_if, sink_cpu)):
            # veth accepts threaded NAPI only while its NAPI is enabled (XDP attached or GRO on).
            with contextlib.suppress(OSError):
                Path(f"/sys/class/net/{name}/threaded").write_text("1\n")
            for pid in napi_threads(name):
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(pid, {cpu})

    def sink_count(self) -> int:
        return layout.sum_u64(self.sink.map("sink_count").lookup_per_cpu(layout.u32(0)))

    def measure(self, switch: str, size: int, seconds: float, direct: bool = False, spread: bool = True) -> Rate:
        """Delivered rate through ``switch``; ``direct`` (XDP switches only) runs its program in the generator;
        ``spread``: the frames go to ``SPREAD`` destinations, else to one."""
        if direct and self.under_test is None:
            raise SrfabricError("switch", f"{switch} has no XDP program to run direct")
        frame = self.frame_for(switch, size)
        template = frame[:32]
        self.generator.map("gen_template").update(layout.u32(0), template)
        count = len(self.spread_destinations) if spread else 0
        self.generator.map("gen_spread").update(layout.u32(0), layout.u32(count))
        fd = self.generator.program_fd("stamp_switch" if direct else "stamp_send")
        self._pin_napi(direct)  # NAPI threads appear once a device's NAPI is enabled (XDP attached, GRO on)
        mask = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {self.generator_cpu})
        try:
            rate = self._measure(switch, size, seconds, frame, fd, _ifindex(self.in_if) if direct else 0)
        finally:
            os.sched_setaffinity(0, mask)
        return dataclasses.replace(rate, destinations=count or 1)

    def _measure(self, switch: str, size: int, seconds: float, frame: bytes, fd: int, ingress: int) -> Rate:
        """Offered and delivered rates; ``ingress`` is set only when the switch program runs in the generator."""
        prog_test_run(fd, frame, repeat=self.chunk, live=True, ingress_ifindex=ingress)  # warm up caches and OVS
        time.sleep(0.2)
        before = self.sink_count()
        sent = 0
        began = time.perf_counter()
        while time.perf_counter() - began < seconds:
            prog_test_run(fd, frame, repeat=self.chunk, live=True, ingress_ifindex=ingress)
            sent += self.chunk
        elapsed = time.perf_counter() - began
        time.sleep(0.2)  # frames still queued at the switch
        delivered = (self.sink_count() - before) / elapsed
        return Rate(switch, size, sent / elapsed, delivered, "direct" if ingress else "rig")
