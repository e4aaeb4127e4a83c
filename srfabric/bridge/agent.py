"""The bridge agent: it follows netconfd's running configuration (``STATE/running.xml``, written by the SIL
after every commit and rollback, which then wakes it through ``STATE/changed``), applies each changed port's
gate-parameter-table through a port driver, and keeps the table's state leaves in ``STATE/oper/<interface>/``
for netconfd to serve: ``config-pending`` until the list's base time, then the oper list, cycle and base time,
as a Qbv bridge switches at its base time.

Examples
--------
>>> import tempfile, pathlib
>>> from srfabric.bridge.ports import UnappliedPorts
>>> state = pathlib.Path(tempfile.mkdtemp())
>>> agent = BridgeAgent(state, "s1", UnappliedPorts(), clock=lambda: 0)
>>> agent.poll()  # netconfd has written nothing yet
>>> sorted(agent.applied)
[]
"""

from __future__ import annotations

import logging
import os
import select
import stat
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from srfabric.bridge import oper_state
from srfabric.bridge.ports import PortDriver
from srfabric.errors import ModelError
from srfabric.rules.yang.sched_tables import port_tables
from srfabric.tsn.gates.gcl import PortGcl

log = logging.getLogger(__name__)


class BridgeAgent:
    """Applies what netconfd committed; ``clock`` gives TAI nanoseconds (passed in)."""

    def __init__(self, state: Path, bridge: str, ports: PortDriver, clock: Callable[[], int],
                 tick_tenths_ns: int = 10) -> None:
        self.state = state
        self.bridge = bridge
        self.ports = ports
        self.clock = clock
        self.tick_tenths_ns = tick_tenths_ns
        self.applied: dict[str, PortGcl | None] = {}  # by interface: the admin list last applied
        self.due: dict[str, PortGcl] = {}  # lists whose base time is still ahead
        self.errors: dict[str, int] = {}  # by interface: lists the port driver refused
        self._seen: tuple[int, int, int] | None = None

    def poll(self) -> None:
        """Apply what changed in the running configuration, then switch the lists whose base time came."""
        text = self._changed_running()
        if text is not None:
            try:
                tables = port_tables(text, self.bridge)
            except ModelError as error:
                log.error("running configuration not read: %s", error)
                tables = {}
            for name, table in tables.items():
                self._port(name, table.admin if table.enabled else None)
        self._switch_due(self.clock())

    def run(self, stop: threading.Event, longest_s: float = 0.5) -> None:
        """``poll`` until ``stop`` is set: when netconfd's SIL writes to ``STATE/changed`` (a FIFO made here), when
        a list's base time comes, and at least every ``longest_s``. Nothing polls in between: on a bridge sharing
        one CPU with its traffic, a timer every few milliseconds costs the frames' latency."""
        try:
            reader, holder = self._fifo()
        except OSError as error:  # a file system without FIFOs: read the file every 20 ms instead
            log.warning("bridge %s: no FIFO in %s (%s); polling instead", self.bridge, self.state, error)
            while not stop.wait(0.02):
                self.poll()
            return
        try:
            while not stop.is_set():
                self.poll()
                ready, _, _ = select.select([reader], [], [], self._wait_s(longest_s))
                if ready:
                    os.read(reader, 4096)
        finally:
            os.close(holder)
            os.close(reader)

    def _fifo(self) -> tuple[int, int]:
        """``STATE/changed`` as a FIFO (anything else of that name replaced), opened to read and held open to
        write, so that the reader never sees an end of file; opened before the first read, so no change is
        missed."""
        fifo = self.state / "changed"
        if fifo.exists() and not stat.S_ISFIFO(fifo.stat().st_mode):
            fifo.unlink()
        if not fifo.exists():
            os.mkfifo(fifo, 0o600)
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        return reader, os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)

    def _wait_s(self, longest_s: float) -> float:
        """Seconds until the next base time of a list still pending, at most ``longest_s``."""
        if not self.due:
            return longest_s
        left_ns = min(gcl.base_time_ns for gcl in self.due.values()) - self.clock()
        return min(longest_s, max(0.0, left_ns / 1e9))

    def _changed_running(self) -> str | None:
        path = self.state / "running.xml"
        try:
            status = path.stat()
            seen = (status.st_ino, status.st_mtime_ns, status.st_size)  # the SIL renames a new file in
            if seen == self._seen:
                return None
            text = path.read_text()
        except OSError:
            return None
        self._seen = seen
        return text

    def _port(self, name: str, admin: PortGcl | None) -> None:
        if name not in self.applied:
            self._write(name, {"tick-granularity": str(self.tick_tenths_ns)})
        if self.applied.get(name) == admin:
            return
        try:
            if admin is None:
                self.ports.release(name)
            else:
                self.ports.apply(admin)
        except ModelError as error:
            self.errors[name] = self.errors.get(name, 0) + 1
            self._write(name, {"config-change-error": str(self.errors[name])})
            log.error("bridge %s: %s", self.bridge, error)
            return
        self.applied[name] = admin
        self.due.pop(name, None)
        if admin is None:
            self._write(name, oper_state.stopped())
        else:
            self.due[name] = admin
            self._write(name, oper_state.pending())
        log.info("bridge %s port %s: %s", self.bridge, name, "released" if admin is None else
                 f"{len(admin.entries)} entries from base time {admin.base_time_ns}, {self.ports.name}")

    def _switch_due(self, now_ns: int) -> None:
        for name, gcl in list(self.due.items()):
            if gcl.base_time_ns > now_ns:
                continue
            cycles = max(0, -(-(now_ns - gcl.base_time_ns) // gcl.cycle_ns)) if gcl.cycle_ns else 0
            self._write(name, oper_state.running(gcl, gcl.base_time_ns + cycles * gcl.cycle_ns))
            del self.due[name]

    def _write(self, interface: str, files: Mapping[str, str | None]) -> None:
        folder = self.state / "oper" / interface
        folder.mkdir(parents=True, exist_ok=True)
        for leaf, text in files.items():
            path = folder / leaf
            if text is None:
                path.unlink(missing_ok=True)
                continue
            part = folder / f".{leaf}.part"
            part.write_text(text + "\n")
            os.replace(part, path)
