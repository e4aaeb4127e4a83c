"""gPTP across a lab fabric: one ptp4l per bridge (on all of its ports, in the namespace that holds them) and one
per end station (in the station's namespaces), the first bridge the grandmaster; the domain read as the
controller judges it. The same clocks serve the NETCONF bridges and the local-taprio reference, so that the two
differ in how gates are pushed and in nothing else."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from srfabric_tools.testbed.gptp import Ptp4l

BOUND_NS = 100_000  # software timestamps on veth, on an emulated CPU


class GptpDomain:
    """ptp4l on ``ports`` (by bridge) and on each of ``stations`` (``<station>-eth0``); files in ``folder``."""

    def __init__(self, ports: dict[str, list[str]], stations: list[str], folder: Path) -> None:
        first = sorted(ports)[0]
        self.clocks = {name: Ptp4l(folder, name, None, interfaces, grandmaster=name == first)
                       for name, interfaces in ports.items()}
        self.stations = {name: Ptp4l(folder, name, None, [f"{name}-eth0"]) for name in sorted(stations)}

    def serve_args(self) -> tuple[str, ...]:
        """``srfabric serve``'s gating on every bridge's ptp4l (``--gptp``, through its UNIX socket): a stream
        through a bridge off the domain is refused, and a bridge back gets its gates again."""
        clocks = [f"--gptp={name}={clock.socket}" for name, clock in sorted(self.clocks.items())]
        return (*clocks, "--gptp-bound-ns", str(BOUND_NS))

    def start(self, testbed: Any) -> None:
        """ptp4l on the bridges (this namespace: the switches' ports) and in each end station's namespaces."""
        for clock in self.clocks.values():
            clock.start()
        for name, station in self.stations.items():
            station.start(partial(testbed.popen, name))

    def view(self) -> dict[str, Any]:
        """Each bridge's gPTP state now, judged as the controller would (one grandmaster, offset within bound)."""
        from srfabric.southbound.pmc import read_clock
        from srfabric.tsn.runtime.clock_watch import ClockWatch

        watch = ClockWatch({name: clock.socket for name, clock in self.clocks.items()}, BOUND_NS, read_clock)
        watch.poll()
        return watch.view()

    def wait_formed(self, timeout_s: float = 300.0) -> dict[str, Any]:
        """Until every bridge follows one grandmaster within the bound (or ``timeout_s``): the state then."""
        deadline = time.monotonic() + timeout_s
        while True:
            state = self.view()
            if all(bridge["synced"] for bridge in state.values()) or time.monotonic() > deadline:
                return {"at_start": state, "formed": all(bridge["synced"] for bridge in state.values())}
            time.sleep(1.0)

    def stop(self) -> None:
        for clock in [*self.clocks.values(), *self.stations.values()]:
            clock.stop()
