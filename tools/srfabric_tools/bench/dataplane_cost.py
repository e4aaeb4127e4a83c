"""Cost per packet of each XDP program, measured in the kernel with BPF_PROG_TEST_RUN.

The analogue of Table 1 of the SFC-in-DC paper (cycles per packet of Click's
``SourceRouter`` against a 380K-route LPM table); this kernel exposes no cycle
counters, so the unit is nanoseconds.

Every call runs the program once (repeat 1) on a fresh copy of the frame, as
a switch sees it, and the figure is the mean of the fastest 90 % of calls (the
timer ticks in 10 ns steps here; trimming removes interrupts, averaging the
steps). ``empty``, a program that only returns, shows the timer's own share,
which ``net`` subtracts. Repeat counts above 1 are not used: the kernel then
swaps the program into the XDP dispatcher around the call, which slows the
runs that follow, and the runs would share one buffer, so a program would read
the header it wrote on the previous run.

Where the JIT puts a program's code moves its cost by several ns from one load
to the next (the SR/redirect ratio of one load ranged 1.08 to 1.23 over eight
loads here), so each round loads the small programs afresh and the figures
average over the loads. Within a round the cases take turns in short blocks,
so a slow spell of the machine hits them all alike.

After measuring, the programs' verdict counters must show only the expected
verdict; otherwise the benchmark measured some other path and says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from srfabric.codecs.mac_nibble import MacNibbleCodec
from srfabric.codecs.mac_vlan_mpls import MacVlanMplsCodec
from srfabric.errors import SrfabricError
from srfabric.tsn.model.frer import SEQ_SPACE
from srfabric.tsn.protect.psfp import FlowMeter, GateInterval, Identity, StreamGate, StreamProtection
from srfabric.xdp import frames, layout, psfp
from srfabric.xdp.bpf_syscall import prog_test_run
from srfabric.xdp.frer import FrerEliminator, rtag
from srfabric.xdp.loader import LoadedObject, load
from srfabric.xdp.probe import verdict_counts
from srfabric.xdp.routes import PAPER_ROUTES, addresses_in, route_table

LO = 1
SRC, DST = "10.0.0.1", "10.0.0.2"
POLICED_PASS, POLICED_DROP = 6001, 6002  # the UDP ports of the two policed streams


@dataclass(frozen=True)
class CostCase:
    key: str
    label: str
    kind: str
    program: str
    frames: tuple[bytes, ...]
    verdict: str | None  # the only reason the run may count (None: the program counts nothing)


@dataclass(frozen=True)
class Cost:
    key: str
    label: str
    ns: float
    net_ns: float  # minus the empty program's time

    def row(self) -> dict[str, object]:
        return {"program": self.key, "label": self.label, "ns_per_packet": round(self.ns, 1),
                "net_ns_per_packet": round(self.net_ns, 1)}


def _plain(dst: str = DST, dport: int = 5001) -> bytes:
    return frames.udp_frame(dst_mac=0x0E0000000000, src_mac=0x0A0000000001, src=SRC, dst=dst, dport=dport)


def _ten_hops() -> list[int]:
    return [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]


def cases(lpm_destinations: list[str]) -> list[CostCase]:
    plain = _plain()
    nibble = frames.with_source_mac(plain, MacNibbleCodec().encode(_ten_hops()).eth_src)
    mpls = frames.mpls_frame(MacVlanMplsCodec().encode(_ten_hops()).wire(), plain)
    lpm = tuple(_plain(dst) for dst in lpm_destinations)
    return [
        CostCase("empty", "empty program (timer floor)", "redirect", "empty", (plain,), None),
        CostCase("redirect", "bare XDP redirect (devmap)", "redirect", "bare_redirect", (plain,), None),
        CostCase("sr_mac_nibble", "SR transit, mac-nibble", "mac-nibble", "sr_fabric", (nibble,), "forwarded"),
        CostCase("sr_mac_vlan_mpls", "SR transit, mac-vlan-mpls", "mac-vlan-mpls", "sr_fabric", (mpls,),
                 "forwarded"),
        CostCase("sre_encap", "SRE encapsulation, mac-nibble", "mac-nibble", "sr_host", (plain,), "encapsulated"),
        CostCase("sre_encap_mpls", "SRE encapsulation, mac-vlan-mpls", "mac-vlan-mpls", "sr_host", (plain,),
                 "encapsulated"),
        # 802.1Qci at the ingress edge: a protected stream's frame through its filter, open gate and meter, then
        # encapsulated; and one outside its gate's window, dropped. Their cost less sre_encap's is the policing's.
        CostCase("sre_policed_pass", "SRE encapsulation of a policed stream (filter, gate open, meter)",
                 "mac-nibble", "sr_host", (_plain(dport=POLICED_PASS),), "encapsulated"),
        CostCase("sre_policed_drop", "SRE ingress policing, frame outside its window (dropped)", "mac-nibble",
                 "sr_host", (_plain(dport=POLICED_DROP),), "drop_policed"),
        CostCase("lpm_380k", f"LPM, {PAPER_ROUTES // 1000}K IPv4 routes", "lpm", "lpm_route", lpm, "routed"),
        # 802.1CB end-system elimination: every frame a new number (passed, its R-TAG taken out), and one number
        # again and again (each a duplicate, dropped).
        CostCase("frer_pass", "FRER elimination, first copy (passed, R-TAG removed)", "frer",
                 "frer_eliminate_one_queue", tuple(rtag(n, plain) for n in range(SEQ_SPACE)), None),
        # Streams of their own (other UDP ports): every call after the first is a duplicate inside the window.
        CostCase("frer_discard", "FRER elimination, second copy (dropped)", "frer", "frer_eliminate_one_queue",
                 (rtag(7, _plain(dport=5002)),), None),
        CostCase("frer_discard_locked", "FRER elimination, second copy, with a lock (several receive queues)",
                 "frer", "frer_eliminate", (rtag(7, _plain(dport=5003)),), None),
    ]


def _fill_edge(obj: LoadedObject, codec: str) -> None:
    rest = [2, 3]
    if codec == "mac-nibble":
        value = layout.action(layout.ACT_ENCAP, 1, eth_src=MacNibbleCodec().encode(rest).eth_src)
    else:
        header = MacVlanMplsCodec().encode(rest)
        value = layout.action(layout.ACT_ENCAP, 1, eth_dst=header.eth_dst, vlan_tci=header.vlan_vid,
                              mpls=int(header.wire()["mpls"], 16))
    obj.map("sr_actions").update(layout.u32(0), value)
    obj.map("sr_routes").update(layout.ipv4(DST), layout.u32(0))
    if codec == "mac-nibble":
        psfp.install(obj, [(_policed(POLICED_PASS, open_gate=True), 0), (_policed(POLICED_DROP, open_gate=False), 0)])


def _policed(dport: int, open_gate: bool) -> StreamProtection:
    """A stream whose gate is open (or closed) the whole cycle and whose meter never runs dry: each call takes the
    same path whenever it runs."""
    gate = StreamGate(1_000_000, 0, (GateInterval(open_gate, 1_000_000),))
    return StreamProtection(dport, f"policed-{dport}", "bench", "h1", Identity(SRC, DST, udp_dst=dport), 7, 1500,
                            gate, FlowMeter(cir_bps=10**15, cbs_bytes=10**6))


RELOADED = ("redirect", "mac-nibble", "mac-vlan-mpls", "frer")  # the LPM object keeps its 380,000 routes
BLOCK = 500  # calls of one case before the next case's turn


@dataclass
class CostRig:
    """The loaded objects, their tables filled; ``reload()`` loads the small ones again."""

    tag: str
    objects: dict[str, LoadedObject]
    destinations: list[str]

    def reload(self) -> None:
        for kind in RELOADED:
            if kind in self.objects:
                self.objects.pop(kind).unload()
        for kind in RELOADED:
            self.objects[kind] = _ready(kind, f"{self.tag}-{kind}")


def _ready(kind: str, name: str) -> LoadedObject:
    if kind == "frer":
        return FrerEliminator.load(name, history_length=32, reset_ms=3_600_000).loaded
    obj = load(kind, name)
    for port in range(1, 17):
        obj.add_port(port, LO)
    if kind in ("mac-nibble", "mac-vlan-mpls"):
        _fill_edge(obj, kind)
    return obj


@contextmanager
def cost_rig(routes: int, tag: str, progress: Callable[[str], None] = lambda _: None) -> Iterator[CostRig]:
    """Load every object with its tables filled; the rig also names the LPM test destinations."""
    rig = CostRig(tag, {}, [])
    try:
        rig.reload()
        rig.objects["lpm"] = _ready("lpm", f"{tag}-lpm")
        progress(f"filling the LPM table with {routes} routes")
        table = route_table(routes, ports=16)
        lpm = rig.objects["lpm"].map("sr_lpm")
        for prefix, port in table:
            lpm.update(layout.lpm_key(prefix), layout.u32(port))
        rig.destinations = addresses_in(table, 64)
        yield rig
    finally:
        for obj in rig.objects.values():
            obj.unload()


def _verdicts(obj: LoadedObject) -> list[int]:
    return [] if obj.kind in ("redirect", "frer") else verdict_counts(obj)


def measure_costs(
    rig: CostRig, samples: int, rounds: int = 5, tick: Callable[[str], None] = lambda _: None,
) -> list[Cost]:
    """ns per packet of every case over ``rounds`` loads of the programs, ``samples`` calls per case."""
    plan = cases(rig.destinations)
    times: dict[str, list[float]] = {c.key: [] for c in plan}
    per_round = max(1, samples // rounds)
    for round_ in range(rounds):
        if round_:
            rig.reload()
        for block in range(0, per_round, BLOCK):
            for case in plan:
                tick(f"{case.label} (load {round_ + 1} of {rounds})")
                obj = rig.objects[case.kind]
                fd = obj.program_fd(case.program)
                before = _verdicts(obj)
                for i in range(block, min(block + BLOCK, per_round)):
                    times[case.key].append(prog_test_run(fd, case.frames[i % len(case.frames)]).duration_ns)
                _check_verdicts(case, before, _verdicts(obj))
    floor = trimmed_mean(times["empty"])
    return [Cost(c.key, c.label, trimmed_mean(times[c.key]), trimmed_mean(times[c.key]) - floor) for c in plan]


def trimmed_mean(values: list[float], keep: float = 0.9) -> float:
    """Mean of the smallest ``keep`` share of ``values``.

    >>> trimmed_mean([10, 10, 20, 20, 20, 20, 20, 20, 20, 900])
    17.77777777777778
    """
    ordered = sorted(values)
    kept = ordered[:max(1, int(len(ordered) * keep))]
    return sum(kept) / len(kept)


def _check_verdicts(case: CostCase, before: list[int], after: list[int]) -> None:
    if case.verdict is None:
        return
    moved = {layout.REASONS[i]: b - a for i, (a, b) in enumerate(zip(before, after, strict=True)) if b != a}
    if set(moved) != {case.verdict}:
        raise SrfabricError("bench", f"{case.label} took other paths than {case.verdict!r}: {moved}")
