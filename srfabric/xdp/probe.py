"""Run one frame through a loaded XDP program and say what it did: action, reason, port, frame.

The reason and the egress port come from the programs' own per-CPU counters
(``sr_verdicts``, ``sr_port_tx``), read before and after the run, so a probe
checks the counting as well as the forwarding.
"""

from __future__ import annotations

from dataclasses import dataclass

from srfabric.xdp.bpf_syscall import prog_test_run
from srfabric.xdp.layout import REASONS, XDP_ACTIONS, sum_counts, sum_u64, u32
from srfabric.xdp.loader import LoadedObject

PORTS = 256


def verdict_counts(loaded: LoadedObject) -> list[int]:
    """Frames counted so far per reason (index into ``layout.REASONS``), summed over CPUs."""
    table = loaded.map("sr_verdicts")
    return [sum_counts(table.lookup_per_cpu(u32(i))).packets for i in range(len(REASONS))]


@dataclass(frozen=True)
class Outcome:
    action: str
    reason: str | None
    port: int | None
    frame: bytes


class Probe:
    """One program of a loaded object, ready to test-run frames."""

    def __init__(self, loaded: LoadedObject, program: str, ingress_ifindex: int = 0) -> None:
        self.loaded = loaded
        self.fd = loaded.program_fd(program)
        self.ingress_ifindex = ingress_ifindex

    def verdicts(self) -> list[int]:
        return verdict_counts(self.loaded)

    def port_counts(self) -> list[int]:
        table = self.loaded.map("sr_port_tx")
        return [sum_u64(table.lookup_per_cpu(u32(i))) for i in range(PORTS)]

    def run(self, frame: bytes) -> Outcome:
        before, ports_before = self.verdicts(), self.port_counts()
        result = prog_test_run(self.fd, frame, ingress_ifindex=self.ingress_ifindex)
        after, ports_after = self.verdicts(), self.port_counts()
        reasons = [REASONS[i] for i, (a, b) in enumerate(zip(before, after, strict=True)) if b != a]
        ports = [i for i, (a, b) in enumerate(zip(ports_before, ports_after, strict=True)) if b != a]
        if len(reasons) > 1 or len(ports) > 1:
            raise AssertionError(f"one frame moved several counters: {reasons} {ports}")
        return Outcome(
            XDP_ACTIONS.get(result.retval, str(result.retval)),
            reasons[0] if reasons else None,
            ports[0] if ports else None,
            result.data,
        )
