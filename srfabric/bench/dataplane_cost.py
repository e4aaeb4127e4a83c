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
from srfabric.xdp import frames, layout
from srfabric.xdp.bpf_syscall import prog_test_run
from srfabric.xdp.loader import LoadedObject, load
from srfabric.xdp.probe import verdict_counts
from srfabric.xdp.routes import PAPER_ROUTES, addresses_in, route_table

LO = 1
SRC, DST = "10.0.0.1", "10.0.0.2"


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


def _plain(dst: str = DST) -> bytes:
    return frames.udp_frame(dst_mac=0x0E0000000000, src_mac=0x0A0000000001, src=SRC, dst=dst)


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
        CostCase("lpm_380k", f"LPM, {PAPER_ROUTES // 1000}K IPv4 routes", "lpm", "lpm_route", lpm, "routed"),
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


@contextmanager
def cost_rig(routes: int, tag: str, progress: Callable[[str], None] = lambda _: None) -> Iterator[
        tuple[dict[str, LoadedObject], list[str]]]:
    """Load every object with its tables filled; yields the objects and LPM test destinations."""
    objects: dict[str, LoadedObject] = {}
    try:
        for kind in ("redirect", "mac-nibble", "mac-vlan-mpls", "lpm"):
            objects[kind] = load(kind, f"{tag}-{kind}")
            for port in range(1, 17):
                objects[kind].map("sr_tx_ports").update(layout.u32(port), layout.u32(LO))
        _fill_edge(objects["mac-nibble"], "mac-nibble")
        _fill_edge(objects["mac-vlan-mpls"], "mac-vlan-mpls")
        progress(f"filling the LPM table with {routes} routes")
        table = route_table(routes, ports=16)
        lpm = objects["lpm"].map("sr_lpm")
        for prefix, port in table:
            lpm.update(layout.lpm_key(prefix), layout.u32(port))
        yield objects, addresses_in(table, 64)
    finally:
        for obj in objects.values():
            obj.unload()


def _verdicts(obj: LoadedObject) -> list[int]:
    return [] if obj.kind == "redirect" else verdict_counts(obj)


def measure_costs(
    objects: dict[str, LoadedObject], destinations: list[str], samples: int, rounds: int = 5,
    tick: Callable[[str], None] = lambda _: None,
) -> list[Cost]:
    """ns per packet of every case; cases take turns in ``rounds`` so drift hits all alike."""
    plan = cases(destinations)
    times: dict[str, list[float]] = {c.key: [] for c in plan}
    per_round = max(1, samples // rounds)
    for _ in range(rounds):
        for case in plan:
            tick(case.label)
            obj = objects[case.kind]
            fd = obj.program_fd(case.program)
            before = _verdicts(obj)
            for i in range(per_round):
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
