"""linuxptp's ptp4l for the lab: IEEE 802.1AS (gPTP profile: layer 2, peer delay, transportSpecific 1) with
software timestamping on veth, one instance per bridge or end station in its own namespace, answering ``pmc`` on a
UNIX socket of its own. Every instance runs ``free_running``: in one kernel all of them share CLOCK_REALTIME, so
none may steer it; each still measures its offset from the grandmaster it follows. A started ptp4l is remembered
by its pid and stopped by it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from srfabric_tools.procs import terminate

# The peer-delay threshold is raised from gPTP's 800 ns: software timestamps on veth see microseconds of delay, and
# on the kernel lab's emulated CPU, busy with a whole fabric, a reply can take milliseconds; a port over the
# threshold is not asCapable, and a bridge whose every port is not elects itself grandmaster. For the same reason
# a port waits ten intervals, not three, for a sync or an announcement before it gives its grandmaster up. Syncs go
# once a second, not gPTP's eight times: every instance shares the lab's one emulated CPU with the traffic it
# times, and the clocks it reports on are one kernel's (free running), so more syncs add only load.
CONFIG = """[global]
gmCapable 1
priority1 {priority1}
priority2 248
logAnnounceInterval 0
logSyncInterval 0
syncReceiptTimeout 10
announceReceiptTimeout 10
neighborPropDelayThresh 20000000
min_neighbor_prop_delay -20000000
assume_two_step 1
path_trace_enabled 1
follow_up_info 1
transportSpecific 0x1
ptp_dst_mac 01:80:C2:00:00:0E
network_transport L2
delay_mechanism P2P
time_stamping software
free_running 1
uds_address {socket}
"""


class Ptp4l:
    """One ptp4l on ``interfaces`` in namespace ``netns`` (None: this one); ``grandmaster`` wins the election."""

    def __init__(self, folder: Path, name: str, netns: str | None, interfaces: list[str],
                 grandmaster: bool = False) -> None:
        self.socket = str(folder / f"ptp4l-{name}")
        self.config = folder / f"ptp4l-{name}.cfg"
        self.config.write_text(CONFIG.format(priority1=246 if grandmaster else 248, socket=self.socket))
        self.log = folder / f"ptp4l-{name}.log"
        self.netns, self.interfaces = netns, interfaces
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, launch: Callable[..., subprocess.Popen[bytes]] | None = None) -> None:
        """Start it; ``launch`` (argv, stdout, stderr) starts it elsewhere (a Mininet host's namespaces)."""
        where = ["ip", "netns", "exec", self.netns] if self.netns else []
        ports = [word for interface in self.interfaces for word in ("-i", interface)]
        with self.log.open("ab") as log:
            argv = [*where, "ptp4l", "-f", str(self.config), *ports, "-m"]
            self.process = (launch or subprocess.Popen)(argv, stdout=log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.process is not None:
            terminate(self.process)
            self.process = None
