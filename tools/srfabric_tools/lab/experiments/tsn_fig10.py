"""Coupling Source Routing with TSN, Fig. 10: priority-7 latency as talker–listener pairs are added, by X:Y.

Fig. 7's fabric with ten pairs under ``srfabric serve --gates taprio``: pair i
(t_i → l_i) is a priority-7 stream requested through the API on the primary
path, sending 1,400-byte frames, each at a random point of its period; iperf3
sends best-effort UDP from t1 to l1 beside them. The gates (every port on the
streams' paths) open priority 7 for X µs of each 1 ms cycle, set by the API's
re-schedule; "none" removes taprio from those ports. Each point is measured
twice, side by side: with our talkers, then with D-ITG (the paper's generator)
sending every pair's frames to the same stream ports. Rates are a fifth of the
paper's (1,000 frames/s per pair, iperf3 at 10 Mbit/s) as an emulated CPU
forwards them; a veth has no line rate, so in-class contention costs processing
only. (A 1 Gbit/s token bucket under taprio, as Fig. 12 uses, was tried once:
the 300:700 points then showed no gate wait and at 500:500 the queues grew
without bound from seven pairs; not explained, so Fig. 10 runs without it.)
Run it in the kernel lab: ``srfabric kernel-lab run --ovs -- srfabric lab tsn-fig10``.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from srfabric.southbound.gates import tai_now_ns
from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.experiments import tsn_ditg
from srfabric_tools.lab.experiments.tsn_fig9 import taprio_kernel
from srfabric_tools.lab.experiments.tsn_live import PRIMARY, Fig7Fabric, confirm_times, finish, phase_stats
from srfabric_tools.lab.plot import pyplot, save

Row = dict[str, Any]
PORT, PPS = 7001, 1000
WARMUP = 50  # frames; a flow's first frames take Open vSwitch's slow path
BEST_EFFORT_MBPS = 10
CYCLE_US = 1000


def duties(settings: Settings) -> list[int | None]:
    """Priority-7 open share in % (None: no taprio). Ten streams on one link take ten 27 µs slots, so the
    window must be at least 270 µs: the controller refuses a smaller one (409)."""
    return [None, 50] if settings.quick else [None, 30, 50, 80]


def pair_counts(settings: Settings) -> list[int]:
    return [1, 4] if settings.quick else [1, 4, 7, 10]


def count(settings: Settings) -> int:
    return len(duties(settings)) * len(pair_counts(settings))


def run(ctx: Context) -> None:
    taprio_kernel("tsn-fig10")
    seconds = ctx.settings.seconds
    pairs_max = max(pair_counts(ctx.settings))
    with Fig7Fabric(pairs=pairs_max) as fabric:
        made = 0
        for pairs in pair_counts(ctx.settings):
            for pair in range(made + 1, pairs + 1):
                fabric.stream(f"t{pair}", f"l{pair}", PORT, path=PRIMARY, name=f"pair-{pair}")
            made = pairs
            for duty in duties(ctx.settings):
                if duty is None:
                    gated = fabric.client.get("/v2.0/srfabric/schedule")["schedule"]["last_change"]["gated_ports"]
                    for port in gated:
                        subprocess.run(["tc", "qdisc", "del", "dev", port, "root"], capture_output=True, check=False)
                else:
                    fabric.reschedule(duty)

                def sample(pairs: int = pairs) -> dict[str, float]:
                    return _measure(fabric, pairs, seconds) | _measure_ditg(fabric, pairs, seconds)

                ctx.repeat({"pairs": pairs, "schedule": "none" if duty is None else f"{duty * 10}:{1000 - duty * 10}",
                            "duty_percent": duty or 0, "taprio": duty is not None}, sample)
        ctx.extra["confirm"] = confirm_times(fabric.calls)


def _measure(fabric: Fig7Fabric, pairs: int, seconds: float) -> dict[str, float]:
    """One run: every pair's talker and listener, iperf3 best effort beside them; the pairs' mean latency."""
    assert fabric.lab.testbed is not None
    frames = int(seconds * PPS) - WARMUP
    listeners, paths = [], []
    for pair in range(1, pairs + 1):
        paths.append(fabric.folder / f"pair-{pair}.csv")
        listeners.append(fabric.listen(f"l{pair}", [PORT], frames, paths[-1], timeout_s=3, skip=WARMUP))
    best_effort = _best_effort(fabric, seconds)
    fabric.wait_for_gates()  # the last re-schedule's gates run from their base time on
    time.sleep(0.2)  # the best-effort flows are under way
    start_ns = tai_now_ns()
    talkers = [fabric.talk(f"t{pair}", fabric.ip(f"l{pair}"), [PORT], PPS, seconds, seed=pair)
               for pair in range(1, pairs + 1)]
    for process in (*talkers, *listeners):
        finish(process, timeout_s=4 * seconds + 60)
    _wait(best_effort, 4 * seconds + 30)
    stats = [phase_stats(path, [(start_ns, 2**63)])[0] for path in paths]
    return {"mean_us": statistics.fmean(s["mean_us"] for s in stats), "p99_us": max(s["p99_us"] for s in stats),
            "frames": sum(s["frames"] for s in stats)}


def _measure_ditg(fabric: Fig7Fabric, pairs: int, seconds: float) -> dict[str, float]:
    """The same point with D-ITG, the paper's generator, sending every pair's frames (same rate and size, to
    the same stream port), iperf3 beside it again; the pairs' mean latency."""
    best_effort = _best_effort(fabric, seconds + 1)
    flows = [tsn_ditg.DitgFlow(fabric, f"t{pair}", f"l{pair}", PORT, PPS, seconds).start()
             for pair in range(1, pairs + 1)]
    stats = [tsn_ditg.summary([delay for _, _, delay in flow.packets(timeout_s=4 * seconds + 60)])
             for flow in flows]
    _wait(best_effort, 4 * seconds + 30)
    return {"ditg_mean_us": statistics.fmean(s["mean_us"] for s in stats),
            "ditg_p99_us": max(s["p99_us"] for s in stats), "ditg_frames": sum(s["frames"] for s in stats)}


def _best_effort(fabric: Fig7Fabric, seconds: float) -> list[subprocess.Popen[bytes]]:
    """iperf3's UDP best effort from t1 to l1 for a little longer than ``seconds`` (server, client)."""
    testbed = fabric.lab.testbed
    assert testbed is not None
    server = testbed.popen("l1", ["iperf3", "-s", "-1", "-p", "5201"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    fabric.started.append(server)
    time.sleep(0.5)  # the server listens before its client connects
    client = testbed.popen("t1", ["iperf3", "-u", "-c", fabric.ip("l1"), "-p", "5201", "-b",
                                  f"{BEST_EFFORT_MBPS}M", "-l", "1400", "-t", str(int(seconds) + 1)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fabric.started.append(client)
    return [client, server]


def _wait(processes: list[subprocess.Popen[bytes]], timeout_s: float) -> None:
    for process in processes:
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4.5))
    for schedule in dict.fromkeys(r["schedule"] for r in rows):
        points = sorted((r["pairs"], r["median"]) for r in rows if r["metric"] == "mean_us"
                        and r["schedule"] == schedule)
        line = ax.plot([p for p, _ in points], [m for _, m in points], "o-", label=schedule)[0]
        ditg = sorted((r["pairs"], r["median"]) for r in rows if r["metric"] == "ditg_mean_us"
                      and r["schedule"] == schedule)
        if ditg:
            ax.plot([p for p, _ in ditg], [m for _, m in ditg], "^--", color=line.get_color(),
                    label=f"{schedule}, D-ITG")
    ax.set(xlabel="talker–listener pairs", ylabel="mean priority-7 latency (µs)", yscale="log",
           title="Fig. 10: priority-7 latency by pairs and X:Y (1 ms cycle)")
    ax.legend(fontsize=8, title="X:Y (µs)")
    ax.grid(alpha=0.3)
    save(figure, path, "paper: latency grows with the pairs and as X shrinks; no taprio is lowest")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    means = {(r["schedule"], r["pairs"]): r["median"] for r in rows if r["metric"] == "mean_us"}
    schedules = list(dict.fromkeys(s for s, _ in means))
    pairs = sorted({p for _, p in means})
    out = []
    ditg = {(r["schedule"], r["pairs"]): r["median"] for r in rows if r["metric"] == "ditg_mean_us"}
    for schedule in schedules:
        out.append(f"{schedule}: mean µs by pairs: " + ", ".join(f"{p}: {means[schedule, p]:.0f}" for p in pairs
                                                                  if (schedule, p) in means))
        if ditg:
            out.append(f"{schedule}, D-ITG: mean µs by pairs: " + ", ".join(
                f"{p}: {ditg[schedule, p]:.0f}" for p in pairs if (schedule, p) in ditg))
    for p in pairs:
        gated = sorted((int(s.split(":")[0]), means[s, p]) for s in schedules if s != "none" and (s, p) in means)
        if len(gated) > 1:
            falling = all(b[1] <= a[1] for a, b in zip(gated, gated[1:], strict=False))
            out.append(f"{p} pairs: latency falls as X grows: {'yes' if falling else 'no'}; no taprio lowest: "
                       f"{'yes' if means.get(('none', p), 1e9) <= min(m for _, m in gated) else 'no'}")
    for kind, times in extra.get("confirm", {}).items():
        out.append(f"API {kind}: answered with entries confirmed and gates installed in {times['median_ms']} ms "
                   f"median, {times['max_ms']} ms at most ({times['n']} calls)")
    return out


EXPERIMENT = Experiment(
    name="tsn-fig10",
    title="Coupling Source Routing with TSN, Fig. 10: priority-7 latency by talker–listener pairs and X:Y",
    paper="mean latency grows with the number of pairs and as the priority-7 share shrinks; no taprio is lowest",
    count=count,
    measure=run,
    plot=plot,
    compare=compare,
)
