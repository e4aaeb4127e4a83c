"""srfabric's own experiment in the style of Fig. 12 (IEEE 802.1CB): a link cut at t = ``seconds`` under a
redundant priority-7 stream and, beside it in the same run, a single-path one, on the live fabric with taprio.

Fig. 7's fabric under ``srfabric serve --gates taprio``, every gated port open to priority 7 for 70 % of each
1 ms period (as in Fig. 12). t1 → l1 is redundant (``num_seamless_trees: 2`` on s1-s2-s4 and s1-s3-s4, one slot
on both trees); its talker R-tags and numbers every frame, and l1's interface eliminates the second copy in XDP
(``bpf/frer_eliminate.c``: end-system elimination, as on any Open vSwitch fabric). t2 → l2 is an ordinary
priority-7 stream whose path the scheduler chooses. Both send 1,000 frames/s of 1,400 bytes, every frame at a
random point of its period and stamped when it left. At t = ``seconds`` (10 s by default) the last link of the
single-path stream's path goes down, and the run goes on as long again; the controller repairs the single-path
stream as it repairs any, while the redundant one goes on over its other tree. Every run builds its own fabric,
so each starts with both trees up. As in Fig. 12, the priority-7 class of every gated port drains at an emulated
250 Mbit/s.
Run it in the kernel lab: ``srfabric kernel-lab run --ovs -- srfabric lab tsn-frer``.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

from srfabric.southbound.gates import tai_now_ns
from srfabric_tools.lab.core import Context, Experiment, Settings
from srfabric_tools.lab.experiments.tsn_fig9 import taprio_kernel
from srfabric_tools.lab.experiments.tsn_live import PRIMARY, SECONDARY, Fig7Fabric, finish, latency_series, sleep_until

Row = dict[str, Any]
PPS, DUTY, LINE_MBIT = 1000, 70, 250
PORTS = {"redundant": 6100, "single": 6200}
STREAMS = ("redundant", "single")


def count(settings: Settings) -> int:
    return 1


def received(csv_path: Path) -> list[tuple[int, int, int]]:
    """(sequence number, planned send, latency) of every frame a listener wrote, as it came."""
    with csv_path.open() as rows:
        return [(int(r["seq"]), int(r["planned_ns"]), int(r["latency_ns"])) for r in csv.DictReader(rows)]


def outcome(frames: list[tuple[int, int, int]], sent: int, cut_ns: int, skip_ns: int) -> dict[str, float]:
    """Lost and twice-delivered frames, the longest gap between two frames sent less the period (ms), and the mean
    latency before and after the cut (µs), leaving out the first ``skip_ns`` (the kernel datapath's first upcalls).

    >>> row = outcome([(0, 0, 50_000), (1, 1_000_000, 60_000), (1, 1_000_000, 70_000), (3, 3_000_000, 80_000)],
    ...               4, 2_000_000, 0)
    >>> row["lost"], row["duplicates"], row["gap_ms"], row["before_mean_us"], row["after_mean_us"]
    (1.0, 1.0, 1.0, 60.0, 80.0)
    """
    numbers = [seq for seq, _, _ in frames]
    unique = sorted(set(numbers))
    planned = sorted({planned for _, planned, _ in frames})
    gaps = [(b - a) / 1e6 - 1000 / PPS for a, b in zip(planned, planned[1:], strict=False)]
    before = [latency for _, at, latency in frames if skip_ns <= at < cut_ns]
    after = [latency for _, at, latency in frames if at >= cut_ns]
    return {"lost": float(sent - len(unique)), "duplicates": float(len(numbers) - len(unique)),
            "gap_ms": round(max(gaps, default=0.0), 3),
            "before_mean_us": round(sum(before) / max(1, len(before)) / 1000, 2),
            "after_mean_us": round(sum(after) / max(1, len(after)) / 1000, 2)}


def run(ctx: Context) -> None:
    from srfabric.xdp.frer import FrerEliminator
    from srfabric.xdp.loader import build

    taprio_kernel("tsn-frer")
    half = ctx.settings.seconds
    build()
    rep, cuts = 0, []
    totals: dict[str, int] = {}

    def sample() -> dict[str, float]:
        """One run on a fabric of its own: on the kernel datapath a cut link was not known again (the lab's
        page), and each run should start with both trees up."""
        nonlocal rep
        rep += 1
        with Fig7Fabric(pairs=2, line_mbit=LINE_MBIT) as fabric:
            fabric.stream("t1", "l1", PORTS["redundant"], path=PRIMARY, name="redundant",
                          more={"num_seamless_trees": 2, "second_path": SECONDARY, "udp_source_port": 6101})
            single = fabric.stream("t2", "l2", PORTS["single"], name="single")
            fabric.reschedule(DUTY)
            testbed = fabric.lab.testbed
            assert testbed is not None
            eliminator = FrerEliminator.load(f"lab-tsn-frer-{rep}", history_length=32, reset_ms=2000)
            try:
                eliminator.attach("l1-eth0", testbed.node("l1").pid)
                row = one_run(ctx, fabric, single, rep, half)
                for leaf, count in next(iter(eliminator.counters().values()), {}).items():
                    totals[leaf] = totals.get(leaf, 0) + count
            finally:
                eliminator.attach("l1-eth0", testbed.node("l1").pid, off=True)
                eliminator.unload()
            cuts.append(row.pop("cut"))
            ctx.extra.setdefault("api_calls", []).extend(fabric.calls)
        return {name: value for name, value in row.items() if isinstance(value, float)}

    ctx.repeat({"duty_percent": DUTY, "pps": PPS}, sample)
    ctx.extra["cuts"] = cuts
    ctx.extra["eliminator"] = totals


def one_run(ctx: Context, fabric: Fig7Fabric, single: dict[str, Any], rep: int, half: float) -> dict[str, Any]:
    """Both streams for ``2 * half`` seconds, the single-path stream's last link cut at ``half``."""
    assert fabric.lab.testbed is not None
    listener = fabric.lab.spec.hosts["l1"]
    paths = {name: fabric.folder / f"{name}-{rep}.csv" for name in STREAMS}
    cut = (single["path"][-2], single["path"][-1])
    sent = int(2 * half * PPS)
    listeners = [fabric.listen(host, [PORTS[name]], sent, paths[name], timeout_s=3)
                 for name, host in (("redundant", "l1"), ("single", "l2"))]
    fabric.wait_for_gates()
    start_ns, begin = tai_now_ns(), time.monotonic()
    talkers = [fabric.talk("t1", listener.ip, [PORTS["redundant"]], PPS, 2 * half, seed=rep,
                           rtag=("t1-eth0", f"{listener.mac:012x}", fabric.ip("t1"), "6101")),
               fabric.talk("t2", fabric.ip("l2"), [PORTS["single"]], PPS, 2 * half, seed=100 + rep)]
    sleep_until(begin + half)
    cut_ns = tai_now_ns()
    fabric.lab.testbed.net.configLinkStatus(*cut, "down")
    for process in (*talkers, *listeners):
        finish(process, timeout_s=4 * half + 60)
    skip = int(0.1 * half * 1e9)
    row: dict[str, Any] = {"cut": "-".join(cut)}
    for name in STREAMS:
        frames = received(paths[name])
        row |= {f"{name}_{metric}": value for metric, value in outcome(frames, sent, cut_ns, start_ns + skip).items()}
        ctx.extra.setdefault(f"{name}_series", []).append(latency_series(paths[name], start_ns, 0.25))
    ctx.extra.setdefault("cut_s", []).append(round((cut_ns - start_ns) / 1e9, 3))
    return row


def plot(rows: list[Row], extra: dict[str, Any], path: Path) -> None:
    """The last run: each stream's frames and mean latency per quarter second, the cut marked."""
    from srfabric_tools.lab.plot import pyplot, save

    plt = pyplot()
    figure, (frames_ax, latency_ax) = plt.subplots(2, 1, figsize=(7.5, 6), sharex=True)
    for name, style in (("redundant", "o-"), ("single", "s-")):
        series = (extra.get(f"{name}_series") or [[]])[-1]
        label = "redundant (802.1CB, two trees)" if name == "redundant" else "single path"
        frames_ax.plot([t for t, _, _ in series], [n for _, _, n in series], style, markersize=3, label=label)
        latency_ax.plot([t for t, _, _ in series], [m for _, m, _ in series], style, markersize=3, label=label)
    for ax in (frames_ax, latency_ax):
        for cut in (extra.get("cut_s") or [[]])[-1:]:
            ax.axvline(cut, color="grey", linestyle="--")
        ax.grid(alpha=0.3)
    frames_ax.set(ylabel="frames per 0.25 s", title="A link cut under a redundant and a single-path stream")
    latency_ax.set(xlabel="time (s)", ylabel="mean latency (µs)")
    frames_ax.legend(fontsize=8)
    save(figure, path, "the redundant stream loses nothing at the cut; the single-path one loses its repair time")


def compare(rows: list[Row], extra: dict[str, Any]) -> list[str]:
    by = {r["metric"]: r["median"] for r in rows}
    out = []
    for name in STREAMS:
        out.append(f"{name}: lost {by.get(f'{name}_lost', 0):.0f}, delivered twice "
                   f"{by.get(f'{name}_duplicates', 0):.0f}, longest gap {by.get(f'{name}_gap_ms', 0):.1f} ms, mean "
                   f"latency {by.get(f'{name}_before_mean_us', 0):.0f} µs before the cut and "
                   f"{by.get(f'{name}_after_mean_us', 0):.0f} after (medians of the runs)")
    if extra.get("eliminator"):
        counters = extra["eliminator"]
        out.append("l1's eliminator over all runs: " + ", ".join(f"{k} {v}" for k, v in counters.items()))
    return out


EXPERIMENT = Experiment(
    name="tsn-frer",
    title="A link cut under a redundant (IEEE 802.1CB) and a single-path priority-7 stream, taprio gates",
    paper="srfabric's own: FRER (issue 43) beside Fig. 12's setting; the redundant stream should lose nothing and "
          "deliver nothing twice, the single-path one loses what its repair takes",
    count=count,
    measure=run,
    plot=plot,
    compare=compare,
)
