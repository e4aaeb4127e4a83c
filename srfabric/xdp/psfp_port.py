"""Per-stream filtering and policing in front of any switch port: ``bpf/psfp_edge.c`` attached to the port a
talker sends into (native XDP), holding that port's protected streams in a table of its own, keyed as srfabric's
XDP edge keys them with in-port 0, and handing every frame it does not drop to the kernel and whatever switch
holds the port (Open vSwitch's datapath, a Linux bridge). Its gate reads the TAI clock for every frame; Linux's
``act_gate`` (``tsn.protect.tc``) steps its gate by a soft timer and loses its phase when that timer fires after
the entry it starts has ended, as it does under load.

The thin shell: the plans are the core's (``tsn.protect``), the table's entries ``xdp.psfp``'s.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from srfabric.errors import SrfabricError
from srfabric.tsn.protect.psfp import StreamProtection
from srfabric.xdp import layout, psfp
from srfabric.xdp.loader import LoadedObject, load
from srfabric.xdp.ports import attach_command

PROGRAM = "psfp_edge"
OUTCOMES = ("passed", "dropped")  # psfp_edge.c's PSFP_EDGE_PASSED, PSFP_EDGE_DROPPED


class PsfpPort:
    """The policing program on one interface; ``detach()`` takes it off and frees its table."""

    def __init__(self, interface: str, obj: LoadedObject) -> None:
        self.interface = interface
        self.obj = obj

    @classmethod
    def attach(cls, interface: str) -> PsfpPort:
        """Load the program for ``interface`` and attach it there; ``SrfabricError`` naming the port if the
        kernel refuses."""
        obj = load("psfp-edge", f"psfp-{interface}")
        done = subprocess.run(attach_command(interface, obj.program(PROGRAM)), capture_output=True, text=True)
        if done.returncode:
            obj.unload()
            raise SrfabricError(f"port {interface}", f"XDP policing not attached: {done.stderr.strip()[:300]}")
        return cls(interface, obj)

    def converge(self, plans: Sequence[StreamProtection]) -> tuple[int, int]:
        """Hold exactly ``plans`` (those whose talker sends into this port); the entries written and removed."""
        return psfp.converge(self.obj, [(plan, 0) for plan in plans])

    def counters(self) -> dict[int, dict[str, int]]:
        """Each stream's counters by handle, under ``ieee802-dot1q-psfp``'s names."""
        return psfp.counters(self.obj)

    def outcomes(self) -> dict[str, int]:
        """Every frame the program saw, passed or dropped."""
        table = self.obj.map("psfp_edge_count")
        return {name: layout.sum_u64(table.lookup_per_cpu(layout.u32(index))) for index, name in enumerate(OUTCOMES)}

    def detach(self) -> None:
        subprocess.run(attach_command(self.interface, None), capture_output=True, check=False)
        self.obj.unload()
