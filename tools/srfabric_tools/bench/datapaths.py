"""``srfabric bench datapaths``: one switch's forwarding rate on ``bench dataplane``'s veth rig, Open vSwitch's
kernel datapath beside its userspace one and the XDP switches, in one run.

The host here has no ``openvswitch.ko``, so ``bench dataplane`` can only set the XDP switches against Open
vSwitch's userspace datapath, which a reader of the source-routing paper would call the weaker baseline. This
benchmark runs the same rig (``dataplane_rate.RateRig``: generator -> switch -> sink over veth, the frames'
destinations spread) for ``xdp_sr``, ``xdp_lpm``, and Open vSwitch holding the SR decode entries (``ovs_sr``)
or one entry per route (``ovs_rules``) on both datapaths (``_kernel``: the kernel's). Run it in the kernel lab
(``srfabric kernel-lab run --ovs -- srfabric bench datapaths ...``), where the kernel module loads; there the
rates are in the guest's instruction-counted time (``-icount shift=0``, one virtual CPU running generator,
switch and sink), so only the ratios between switches of the same run carry over, not the rates. Where the
kernel datapath cannot load, its rows are left out and the summary says so.
"""

from __future__ import annotations

import os
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric_tools.bench.dataplane_rate import SPREAD, Rate, RateRig
from srfabric_tools.bench.output import machine, provenance, run_folder, write_json, write_runs
from srfabric_tools.lab.netlab import NetLab

SWITCHES = ("xdp_sr", "ovs_sr", "ovs_sr_kernel", "xdp_lpm", "ovs_rules", "ovs_rules_kernel")
FRAME_BYTES = 64
ROUTES, LAB_ROUTES = 380_000, 20_000  # the guest fills its tables on an emulated CPU: fewer routes there
CHUNK, LAB_CHUNK = 200_000, 20_000
SECONDS, QUICK_SECONDS = 5.0, 1.0
REPEATS, QUICK_REPEATS = 5, 1
RATIOS = (("xdp_sr", "ovs_sr_kernel"), ("xdp_sr", "ovs_sr"), ("ovs_sr_kernel", "ovs_sr"),
          ("xdp_lpm", "ovs_rules_kernel"), ("ovs_rules_kernel", "ovs_rules"), ("xdp_sr", "xdp_lpm"))


def in_kernel_lab() -> bool:
    return os.environ.get("SRFABRIC_KERNEL_LAB") == "1"


def kernel_datapath() -> str | None:
    """None when Open vSwitch's kernel datapath can run here, else why not."""
    if Path("/sys/module/openvswitch").exists():
        return None
    done = subprocess.run(["modprobe", "openvswitch"], capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return None
    return f"openvswitch.ko does not load on kernel {os.uname().release}: {done.stderr.strip()[:160]}"


def median_by_switch(rates: list[Rate]) -> dict[str, float]:
    """Each switch's median delivered rate over its repeats, unrounded.

    >>> median_by_switch([Rate("a", 64, 10.0, 4.0), Rate("a", 64, 10.0, 6.0), Rate("b", 64, 10.0, 1.0)])
    {'a': 5.0, 'b': 1.0}
    """
    grouped: dict[str, list[float]] = {}
    for rate in rates:
        grouped.setdefault(rate.switch, []).append(rate.delivered_pps)
    return {switch: statistics.median(values) for switch, values in grouped.items()}


def measure(quick: bool, say: Callable[[str], None]) -> tuple[list[Rate], str | None, int, str | None]:
    """Every switch's rate (those the kernel can run), why the kernel datapath was left out, the routes, and why
    no rate was measured (a kernel that runs no live frames)."""
    if os.geteuid() != 0:
        raise SrfabricError("user", "the datapaths benchmark loads XDP programs and builds veth links: run as root")
    lab_run = in_kernel_lab()
    routes, chunk = (LAB_ROUTES, LAB_CHUNK) if lab_run or quick else (ROUTES, CHUNK)
    missing = kernel_datapath()
    switches = [s for s in SWITCHES if missing is None or not s.endswith("_kernel")]
    seconds, repeats = (QUICK_SECONDS, QUICK_REPEATS) if quick else (SECONDS, REPEATS)
    rates: list[Rate] = []
    with NetLab() as lab, RateRig(lab, f"paths{os.getpid()}", routes, chunk) as rig:
        for switch in switches if rig.refused is None else ():
            with rig.switch(switch, say):
                for repeat in range(repeats):
                    say(f"datapaths: {switch}, {FRAME_BYTES} B, run {repeat + 1} of {repeats}")
                    rates.append(rig.measure(switch, FRAME_BYTES, seconds))
    return rates, missing, routes, rig.refused


def summarise(rates: list[Rate], missing: str | None, routes: int, quick: bool,
              measured_on: dict[str, Any], refused: str | None = None) -> dict[str, Any]:
    medians = median_by_switch(rates)
    ratios = {f"{top} over {bottom}": medians[top] / medians[bottom]
              for top, bottom in RATIOS if top in medians and medians.get(bottom)}
    return {
        **provenance(measured_on, "srfabric bench datapaths"),
        "quick": quick,
        "where": ("kernel lab: rates in the guest's instruction-counted time, one virtual CPU; compare ratios"
                  if in_kernel_lab() else "this machine"),
        "kernel_datapath": missing or "openvswitch.ko loaded: the _kernel rows are its datapath",
        "frame_bytes": FRAME_BYTES,
        "destinations": SPREAD,
        "routes": routes,
        "rate_pps": {switch: round(value) for switch, value in medians.items()},
        "ratios": ratios,
        "runs": [rate.row() for rate in rates],
        **({"rates_refused": refused} if refused else {}),
    }


def run_bench(quick: bool, out: str, say: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    measured_on = machine()
    rates, missing, routes, refused = measure(quick, say)
    folder = run_folder(out, "datapaths")
    write_runs(folder / "rates.csv", [rate.row() for rate in rates], measured_on)
    summary = summarise(rates, missing, routes, quick, measured_on, refused)
    write_json(folder / "summary.json", summary)
    return summary, folder
