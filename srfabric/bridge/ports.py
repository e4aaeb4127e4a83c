"""Where a bridge's committed gate schedules go: Linux taprio on the bridge's own interfaces, or nowhere on a
kernel without taprio (the schedule is committed and its state kept; the summary says taprio did not run)."""

from __future__ import annotations

import contextlib
import subprocess
from typing import Protocol

from srfabric.errors import ModelError
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.gates.render import to_taprio
from srfabric.tsn.gates.switch_over import for_taprio


class PortDriver(Protocol):
    """Runs one port's list (``ModelError`` naming the port when it cannot), or stops gating the port."""

    name: str

    def apply(self, gcl: PortGcl) -> None: ...

    def release(self, interface: str) -> None: ...


class TaprioPorts:
    """``tc qdisc replace ... taprio`` per port (software mode, CLOCK_TAI): taprio itself switches at the
    list's base time."""

    name = "taprio"

    def __init__(self, timeout_s: float = 10.0) -> None:
        self.timeout_s = timeout_s
        self.running: dict[str, PortGcl] = {}  # interface -> the list it was last given (as committed)

    def apply(self, gcl: PortGcl) -> None:
        """The list, started where it agrees with the one the port runs (``switch_over``: taprio's switch-over then
        opens no gate early)."""
        self._tc(to_taprio(for_taprio(self.running.get(gcl.interface), gcl)).split()[1:], gcl.interface)
        self.running[gcl.interface] = gcl

    def release(self, interface: str) -> None:
        self.running.pop(interface, None)
        with contextlib.suppress(ModelError):  # no taprio was there
            self._tc(["qdisc", "del", "dev", interface, "root"], interface)

    def _tc(self, words: list[str], interface: str) -> None:
        try:
            done = subprocess.run(["tc", *words], capture_output=True, text=True, timeout=self.timeout_s)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ModelError(f"port {interface}", f"tc did not run: {error}") from None
        if done.returncode:
            raise ModelError(f"port {interface}", f"tc refused the schedule: {done.stderr.strip()[:300]}")


class UnappliedPorts:
    """For a kernel without taprio: every list is taken and recorded, none is run."""

    name = "not run (no taprio in this kernel)"

    def __init__(self) -> None:
        self.lists: dict[str, PortGcl] = {}

    def apply(self, gcl: PortGcl) -> None:
        self.lists[gcl.interface] = gcl

    def release(self, interface: str) -> None:
        self.lists.pop(interface, None)
