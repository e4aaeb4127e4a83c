"""What the live-fabric TSN experiments share: Fig. 7's fabric under ``srfabric serve`` with taprio gates,
streams requested through the API (each call timed), unscheduled talkers and timestamping listeners.

Every frame carries the time it left (read just before the send), so a sender
that is late costs nothing; the listener's kernel timestamp ends the latency.
Senders send at random points of their period, as senders that know no
schedule (the papers' D-ITG and iperf), so a frame meets the gate at any phase.
"""

from __future__ import annotations

import csv
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric.model.topo import tsn_fig7
from srfabric_tools.lab.line_rate import emulate_line_rate
from srfabric_tools.lab.stats import percentile
from srfabric_tools.netconf_lab.bridges import topology_ports
from srfabric_tools.netconf_lab.fabric import NetconfBridges
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess
from srfabric_tools.testbed.gptp_domain import GptpDomain

PRIMARY, SECONDARY = ["s1", "s2", "s4"], ["s1", "s3", "s4"]
# How the gates reach the switches: local tc; local tc with gPTP running as over NETCONF; NETCONF to bridges
# (with gPTP); NETCONF without ptp4l, to tell ptp4l's cost on the emulated CPU from NETCONF's.
GATES = ("taprio", "taprio-gptp", "netconf", "netconf-no-ptp")
ENDPOINTS = [sys.executable, "-m", "srfabric_tools.testbed.stations.endpoints"]


class Fig7Fabric:
    """``srfabric serve --gates taprio`` and Fig. 7's fabric (OVS kernel datapath, 8 queues per port). With
    ``gates="netconf"`` the controller runs in a namespace of its own and reaches the switches (OpenFlow) and
    their bridges (``srfabric bridge serve``, NETCONF over SSH, taprio applied by each bridge) over TCP only."""

    def __init__(self, pairs: int, lead_ms: float = 200.0, line_mbit: int | None = None, gates: str = "taprio",
                 serve_args: tuple[str, ...] = ()) -> None:
        if gates not in GATES:
            raise ModelError("gates", f"{gates!r} is not one of {', '.join(GATES)}")
        self.line_mbit = line_mbit  # drain the time-triggered class of every gated port at this rate
        self.folder = Path(tempfile.mkdtemp(prefix="srfabric-tsn-"))
        spec = tsn_fig7(pairs)
        self.bridges = NetconfBridges(spec, self.folder) if gates.startswith("netconf") else None
        # ptp4l on every bridge and station, the controller gating on it; the same with local gates, so that a
        # NETCONF run and its local reference share the clocks' load on the emulated CPU.
        self.domain = GptpDomain(topology_ports(spec), sorted(spec.hosts), self.folder) \
            if gates in ("netconf", "taprio-gptp") else None
        placed = self.bridges.serve_placement() if self.bridges else {}
        gating = self.bridges.serve_args() if self.bridges else ("--gates", "taprio")
        clocks = self.domain.serve_args() if self.domain else ()
        self.serve = ServeProcess(f"sqlite:///{self.folder / 'api.db'}", patience=6,
                                  extra_args=(*gating, *clocks, "--gate-lead-ms", str(lead_ms), *serve_args),
                                  **placed)
        self.lab = ApiLab(spec, self.serve, datapath="kernel", tx_queues=8)
        self.calls: list[dict[str, Any]] = []  # every API change: what, how long until confirmed, entries sent
        self.started: list[subprocess.Popen[bytes]] = []
        self.gates_from_ns = 0  # the common base time (TAI) of the gates the last change installed
        self.clocks: dict[str, Any] = {}  # each bridge's gPTP state once synchronised (with ptp4l running)

    def __enter__(self) -> Fig7Fabric:
        if self.bridges:
            self.bridges.start()
        try:
            self.serve.start()
        except BaseException:
            if self.bridges:
                self.bridges.stop()
            raise
        try:
            self.lab.start()
            self.client = self.serve.client()
            if self.domain:
                self.domain.start(self.lab.testbed)
                self.clocks = self.domain.wait_formed()
                self.clocks["controller_at_start"] = self.controller_clocks(wait_s=120.0)
        except BaseException:
            self._stop_outside()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:  # what the controller said last, for a run that failed inside the kernel lab
            print(f"serve's log, last lines:\n{self.serve.output()[-3000:]}", file=sys.stderr)
        try:
            for process in self.started:
                if process.poll() is None:
                    process.kill()
                    process.wait(10)
            self.client.close()
            self.lab.stop()
        finally:
            self._stop_outside()

    def _stop_outside(self) -> None:
        """What runs beside the fabric: the controller, the clocks, the bridges."""
        try:
            self.serve.stop()
        finally:
            if self.domain:
                self.domain.stop()
            if self.bridges:
                self.bridges.stop()

    def clocks_at_end(self) -> dict[str, Any]:
        """The gPTP state at the start, and now as the bridges' ptp4l and the controller see it."""
        if not self.domain:
            return {**self.clocks, "at_end": {}, "controller_at_end": {}}
        return {**self.clocks, "at_end": self.domain.view(), "controller_at_end": self.controller_clocks()}

    def controller_clocks(self, wait_s: float = 0.0) -> dict[str, Any]:
        """The bridges' gPTP state as the controller gates on it (the fabric view), waiting up to ``wait_s`` for
        every bridge to count as synchronised; with how often the controller saw one leave the domain."""
        deadline = time.monotonic() + (wait_s if self.domain else 0.0)
        while True:
            clocks = self.client.get("/v2.0/srfabric/fabric")["fabric"].get("clocks", {})
            if (clocks and all(state["synced"] for state in clocks.values())) or time.monotonic() >= deadline:
                break
            time.sleep(0.5)
        left = self.serve.output().count("is not synchronised")
        return {"bridges": clocks, "times_a_bridge_left": left}

    def ip(self, host: str) -> str:
        return self.lab.spec.hosts[host].ip

    # -- API changes, each timed until the answer (entries confirmed by barrier, gates installed) ------------
    def _timed(self, what: str, call: Any) -> Any:
        begin = time.perf_counter()
        result = call()
        elapsed = time.perf_counter() - begin
        last = self.client.get("/v2.0/srfabric/schedule")["schedule"]["last_change"]
        self.calls.append({"call": what, "ms": round(elapsed * 1000, 2), "entries": last["entries_sent"],
                           "gated_ports": len(last["gated_ports"]), "at": time.monotonic(),
                           "base_time_ns": last.get("base_time_ns")})
        if self.line_mbit:
            emulate_line_rate(last["gated_ports"], self.line_mbit)
        self.gates_from_ns = max(self.gates_from_ns, last.get("base_time_ns") or 0)
        return result

    def wait_for_gates(self, margin_ns: int = 10_000_000) -> None:
        """Until the gates of the last change run (their base time, plus ``margin_ns``): a measurement that began
        earlier would meet the old schedule for a while (on an emulated CPU, a fixed wait was sometimes short)."""
        from srfabric.southbound.gates import tai_now_ns

        while (left := self.gates_from_ns + margin_ns - tai_now_ns()) > 0:
            time.sleep(min(left / 1e9, 0.5))

    def stream(self, talker: str, listener: str, port: int, priority: int = 7, path: list[str] | None = None,
               name: str = "", more: dict[str, Any] | None = None) -> dict[str, Any]:
        """A stream through the API; ``more``: other fields of its body (a redundant one's second path...)."""
        body: dict[str, Any] = {"name": name, "talker": self.lab.ports[talker], "listener": self.lab.ports[listener],
                                "period_ns": 1_000_000, "size_bytes": 1400, "priority": priority, **(more or {})}
        if port:
            body["udp_destination_port"] = port
        if path:
            body["path"] = path
        return dict(self._timed(f"create {name or port}", lambda: self.client.create("streams", body, "stream")))

    def reroute(self, ident: str, path: list[str], name: str = "") -> None:
        self._timed(f"reroute {name or ident}", lambda: self.client.update("streams", ident, {"path": path}))

    def remove(self, ident: str, name: str = "") -> None:
        self._timed(f"delete {name or ident}", lambda: self.client.delete("streams", ident))

    def reschedule(self, duty_percent: int | None) -> None:
        self._timed(f"reschedule {duty_percent}", lambda: self.client.reschedule(duty_percent))

    # -- traffic --------------------------------------------------------------------------------------------
    def listen(self, host: str, ports: list[int], count: int, csv_path: Path, timeout_s: float = 5.0,
               skip: int = 0) -> subprocess.Popen[bytes]:
        """Frames numbered below ``skip`` are the warm-up; the first frame may take long (talkers start
        one by one on an emulated CPU)."""
        assert self.lab.testbed is not None
        args = [*ENDPOINTS, "listen", "--count", str(count), "--timeout", str(timeout_s), "--first-timeout", "180",
                "--skip", str(skip), "--csv", str(csv_path)]
        for port in ports:
            args += ["--port", str(port)]
        process = self.lab.testbed.popen(host, args, stdout=subprocess.PIPE)
        self.started.append(process)
        assert process.stdout is not None
        if process.stdout.readline().strip() != b"listening":
            raise ModelError("listener", f"on {host} did not start")
        return process

    def talk(self, host: str, dst: str, ports: list[int], pps: int, seconds: float, size: int = 1400,
             seed: int = 1, rtag: tuple[str, str, str, str] | None = None, offset_ns: int | None = None,
             late_limit_ns: int | None = None) -> subprocess.Popen[bytes]:
        """Each port's flow at ``pps``, every frame at a random point of its period (``offset_ns``: that far into
        each period of TAI instead, as a talker that keeps its slot), stamped when it left; ``rtag``: R-tagged on a
        raw socket (interface, destination MAC, source address, source port); ``late_limit_ns``: as a talker that
        keeps its times and rate, under SCHED_FIFO, skipping a frame it woke that much too late for."""
        assert self.lab.testbed is not None
        when = ["--spread"] if offset_ns is None else ["--offset-ns", str(offset_ns)]
        when += [] if late_limit_ns is None else ["--late-limit-ns", str(late_limit_ns)]
        realtime = [] if late_limit_ns is None else ["chrt", "-f", "50"]
        args = [*realtime, *ENDPOINTS, "talk", "--dst", dst, "--period-ns", str(1_000_000_000 // pps), "--count",
                str(max(1, int(seconds * pps))), "--size", str(size), *when, "--stamp", "sent", "--seed",
                str(seed), *(["--rtag", *rtag] if rtag else [])]
        for port in ports:
            args += ["--port", str(port)]
        process = self.lab.testbed.popen(host, args, stdout=subprocess.PIPE)
        self.started.append(process)
        return process


def finish(process: subprocess.Popen[bytes], timeout_s: float = 120.0) -> dict[str, Any]:
    """Wait for an endpoint and return the JSON line it printed last."""
    out, _ = process.communicate(timeout=timeout_s)
    lines = out.decode().strip().splitlines()
    if not lines:
        raise ModelError("endpoint", f"printed nothing (exit code {process.returncode})")
    return dict(json.loads(lines[-1]))


def latency_series(csv_path: Path, start_ns: int, bucket_s: float, port: int | None = None
                   ) -> list[tuple[float, float, int]]:
    """(bucket start in s from ``start_ns``, mean latency in µs, frames) of the frames a listener wrote."""
    buckets: dict[int, list[int]] = {}
    with csv_path.open() as rows:
        for row in csv.DictReader(rows):
            if port is not None and int(row["port"]) != port:
                continue
            index = int((int(row["planned_ns"]) - start_ns) / (bucket_s * 1e9))
            buckets.setdefault(index, []).append(int(row["latency_ns"]))
    return [(round(i * bucket_s, 3), round(statistics.fmean(v) / 1000, 2), len(v))
            for i, v in sorted(buckets.items()) if i >= 0]


def confirm_times(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """Median and largest time from an API change to its answer, by kind of change."""
    kinds: dict[str, list[float]] = {}
    for call in calls:
        kinds.setdefault(call["call"].split()[0], []).append(call["ms"])
    return {kind: {"n": len(ms), "median_ms": round(statistics.median(ms), 1), "max_ms": round(max(ms), 1)}
            for kind, ms in kinds.items()}


def phase_stats(csv_path: Path, bounds: list[tuple[int, int]], port: int | None = None) -> list[dict[str, float]]:
    """Mean, 99th percentile (µs) and frames of the frames sent within each ``[begin, end)`` (TAI ns)."""
    within: list[list[int]] = [[] for _ in bounds]
    with csv_path.open() as rows:
        for row in csv.DictReader(rows):
            if port is not None and int(row["port"]) != port:
                continue
            sent = int(row["planned_ns"])
            for index, (begin, end) in enumerate(bounds):
                if begin <= sent < end:
                    within[index].append(int(row["latency_ns"]))
    stats = []
    for latencies in within:
        values = latencies or [0]
        stats.append({"mean_us": round(statistics.fmean(values) / 1000, 2),
                      "p99_us": round(percentile(values, 0.99) / 1000, 2),
                      "frames": float(len(latencies))})
    return stats


def sleep_until(deadline: float) -> None:
    """Until ``time.monotonic()`` reaches ``deadline``."""
    time.sleep(max(0.0, deadline - time.monotonic()))


def modelled_wait_us(duty_percent: int, cycle_us: int = 1000) -> float:
    """Mean gate wait of frames arriving evenly over the cycle when the gate is open ``duty_percent`` of it:
    closed for Y of C, so Y² / 2C.

    >>> modelled_wait_us(50), modelled_wait_us(90)
    (125.0, 5.0)
    """
    closed = cycle_us * (100 - duty_percent) / 100
    return round(closed * closed / (2 * cycle_us), 2)


def record_phases(ctx: Any, csv_path: Path, start_ns: int, third: float, bounds: list[tuple[int, int]],
                  events_ns: tuple[int, int]) -> dict[str, float]:
    """One run's phase statistics as metrics (``phase1_mean_us`` ...), its latency series and event times
    kept in ``ctx.extra`` for the plot."""
    stats = phase_stats(csv_path, bounds)
    ctx.extra.setdefault("series", []).append(latency_series(csv_path, start_ns, max(0.25, third / 10)))
    ctx.extra.setdefault("events_s", []).append([round((t - start_ns) / 1e9, 3) for t in events_ns])
    return {f"phase{index}_{metric}": value for index, phase in enumerate(stats, start=1)
            for metric, value in phase.items()}


def phase_medians(rows: list[dict[str, Any]], metric: str) -> list[float]:
    """The three phases' medians over the runs of ``metric`` (``mean_us``, ``p99_us``)."""
    by_name = {r["metric"]: r["median"] for r in rows}
    return [by_name.get(f"phase{i}_{metric}", 0.0) for i in (1, 2, 3)]


def plot_timeline(extra: dict[str, Any], path: Path, labels: tuple[str, str], title: str, paper: str) -> None:
    """The last run's probe latency per interval, with its two events marked."""
    from srfabric_tools.lab.plot import pyplot, save

    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7.5, 4.5))
    series = (extra.get("series") or [[]])[-1]
    ax.plot([t for t, _, _ in series], [m for _, m, _ in series], "o-", markersize=3, label="probe mean latency")
    ditg = (extra.get("ditg_series") or [[]])[-1]
    if ditg:
        ax.plot([t for t, _, _ in ditg], [m for _, m, _ in ditg], "^-", markersize=3,
                label="D-ITG probe mean latency")
    for event, label in zip((extra.get("events_s") or [[]])[-1], labels, strict=False):
        ax.axvline(event, color="grey", linestyle="--")
        ax.text(event, 0.97, f"{label} ", transform=ax.get_xaxis_transform(), fontsize=8, rotation=90,
                ha="right", va="top")
    ax.set(xlabel="time (s)", ylabel="mean latency per interval (µs)", title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save(figure, path, paper)


def phase_lines(rows: list[dict[str, Any]], extra: dict[str, Any], names: tuple[str, ...]) -> list[str]:
    """The probe's mean (p99) by phase, and how long the API's changes took to be confirmed."""
    means, p99 = phase_medians(rows, "mean_us"), phase_medians(rows, "p99_us")
    out = ["probe mean (p99) µs by phase: " + ", ".join(
        f"{name}: {m:.0f} ({p:.0f})" for name, m, p in zip(names, means, p99, strict=True))]
    if any(r["metric"] == "phase1_ditg_mean_us" for r in rows):
        ditg_means, ditg_p99 = phase_medians(rows, "ditg_mean_us"), phase_medians(rows, "ditg_p99_us")
        out.append("D-ITG probe mean (p99) µs by phase: " + ", ".join(
            f"{name}: {m:.0f} ({p:.0f})" for name, m, p in zip(names, ditg_means, ditg_p99, strict=True)))
    for kind, times in extra.get("confirm", {}).items():
        out.append(f"API {kind}: answered with entries confirmed and gates installed in {times['median_ms']} ms "
                   f"median, {times['max_ms']} ms at most ({times['n']} calls)")
    return out
