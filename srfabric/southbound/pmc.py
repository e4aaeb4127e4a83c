"""A bridge's gPTP state from linuxptp's ``pmc`` over the bridge's ptp4l UNIX socket (``uds_address``): the
offset from the grandmaster, whether one is present, and the port states (``tsn.gptp`` judges them)."""

from __future__ import annotations

import subprocess

from srfabric.tsn.model.gptp import ClockReading, reading_from_pmc

TIMEOUT_S = 2.0
# gPTP's transportSpecific is 1; ptp4l answers only management messages that carry it.
PMC = ["pmc", "-u", "-b", "0", "-t", "1"]


def read_clock(bridge: str, socket_path: str) -> ClockReading:
    """One reading (a reading with ``error`` set when ptp4l cannot be asked or does not answer in time)."""
    try:
        done = subprocess.run([*PMC, "-s", socket_path, "GET TIME_STATUS_NP", "GET PORT_DATA_SET"],
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except FileNotFoundError:
        return ClockReading(bridge, None, False, "", (), "pmc is not installed (linuxptp; make bootstrap)")
    except subprocess.TimeoutExpired:
        return ClockReading(bridge, None, False, "", (), f"ptp4l at {socket_path} did not answer in {TIMEOUT_S} s")
    return reading_from_pmc(bridge, done.stdout)
