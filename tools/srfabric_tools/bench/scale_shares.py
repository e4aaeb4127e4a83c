"""The scale-out part of ``srfabric bench scale`` (root): two ``srfabric serve`` instances sharing one fabric
beside one instance alone, in the same run, on the same switches and the same offered load.

The fabric is a k=4 fat-tree of real Open vSwitch bridges (userspace datapath) in namespaces of this run's
own, every bridge connected to both instances; the instances share a throwaway PostgreSQL cluster (TLS). The
first instance leads; the second claims the edges of pods 3 and 4 (``--edges``). Both set new flows up
reactively (``--reactive``): each new UDP flow's first frame reaches its ingress edge's MASTER only.

Each repetition measures both configurations, in turn:
- **two instances**: ``RATE`` new flows per second between random hosts for ``SECONDS``, then an idle window
  as long as that one; each instance's CPU time (the scheduler's count, ``/proc/PID/task/*/sched``), and the
  flows it set up and the packet-ins it read (its /metrics), over each window;
- **SIGKILL** the second instance while two numbered UDP streams run at 1,000 frames/s: one between hosts on
  the leader's edges (a chain whose edges the killed instance did not own), one from a host on a killed
  instance's edge. The take-over is the time from the kill to the leader's fabric view naming it MASTER of
  every edge the killed instance held (asked every 20 ms);
- **one instance**: the same windows with the leader alone;
- the second instance is started again, takes its edges back, and is warmed by a second of new flows.
Odd repetitions measure two instances first, even ones one instance first (kill, one, restart, two), so that
a machine whose speed drifts during the run favours neither.

CPU per new flow is each configuration's CPU time over its flows window less its idle window's, over the
flows set up. The idle window is as long as the flows window: its periodic work (link discovery, the database
poll) is then counted over the same span, not scaled up from a shorter one, which multiplied its noise. The
ratio is two instances' over one's, from the same repetition's unrounded values. The goal (within 10 %) is an
upper bound, so it is judged on the ratios' upper quartile.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.model.topo import TopoSpec, fat_tree
from srfabric_tools.bench.calibration import cpu_loop_ms
from srfabric_tools.bench.dataplane_setup import send_flows
from srfabric_tools.bench.new_flows import flow_plan
from srfabric_tools.bench.process_cpu import process_runtime_s
from srfabric_tools.bench.takeover import PPS, RECEIVE, SEND
from srfabric_tools.lab.fabric import LabFabric
from srfabric_tools.lab.netlab import NetLab
from srfabric_tools.lab.stats import quartiles
from srfabric_tools.testbed.api_lab import ServeProcess, postgres_cluster

K = 4
RATE = 400.0  # new flows per second, offered to either configuration
SECONDS, QUICK_SECONDS = 10.0, 2.0
IDLE_TIMEOUT_S = 3600  # no flow's entry expires during a run: its removal would land in a later window
REPEATS, QUICK_REPEATS = 5, 1
STREAM_S = 4.0
FIRST_DPORT, STREAM_PORT = 33000, 32000
RATIO_GOAL, TAKEOVER_GOAL_S = 1.10, 1.0
LOG_TAIL = 4000  # characters of each instance's log kept with a repetition that lost frames


def claimed(spec: TopoSpec) -> list[str]:
    """The edges the second instance claims: those of the second half of the pods (by dpid)."""
    edges = sorted((s for s in spec.switches.values() if s.role == "edge"), key=lambda s: s.dpid)
    return [s.name for s in edges[len(edges) // 2:]]


COUNTED = {"setups": "srfabric_reactive_setup_seconds_count", "packet_ins": "srfabric_packet_ins_total"}


def counted(serve: ServeProcess) -> dict[str, int]:
    """An instance's reactive setups and packet-ins read so far (its /metrics)."""
    asked = urllib.request.Request(f"{serve.url}/metrics", headers={"X-Auth-Token": serve.token})
    with urllib.request.urlopen(asked, timeout=10) as answer:
        lines = dict(line.rsplit(" ", 1) for line in answer.read().decode().splitlines() if line[:1] != "#")
    missing = [name for name in COUNTED.values() if name not in lines]
    if missing:
        raise SrfabricError("metrics", f"{serve.url}/metrics lacks {', '.join(missing)}")
    return {key: int(float(lines[name])) for key, name in COUNTED.items()}


def masters(serve: ServeProcess) -> set[str]:
    """The switches ``serve`` is MASTER of, as its fabric view says (none while it does not answer: a poll)."""
    try:
        with serve.client() as client:
            return {s["name"] for s in client.get("/v2.0/srfabric/fabric")["fabric"]["switches"] if s["master"]}
    except SrfabricError:
        return set()


def wait_for(condition: Any, what: str, timeout: float = 60.0, poll: float = 0.02) -> float:
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            raise SrfabricError("scale-out", f"{what} not within {timeout} s")
        time.sleep(poll)
    return time.monotonic() - began


def discovered(spec: TopoSpec, instances: tuple[ServeProcess, ...]) -> None:
    """Until every instance knows every link (each direction) and the second holds its edges."""
    def links(serve: ServeProcess) -> int:
        with serve.client() as client:
            return sum(link["state"] == "up" for link in client.get("/v2.0/srfabric/fabric")["fabric"]["links"])

    for serve in instances:
        wait_for(lambda s=serve: links(s) == 2 * len(spec.links), f"{serve.url}: every link", poll=0.2)
    wait_for(lambda: bool(masters(instances[-1])), "the second instance's edges")


class Bench:
    """One fabric and its instances for the whole run."""

    def __init__(self, lab: NetLab, fabric: LabFabric, leader: ServeProcess, second: ServeProcess,
                 edges: list[str], seconds: float) -> None:
        self.lab, self.fabric, self.leader, self.second = lab, fabric, leader, second
        self.edges, self.seconds = set(edges), seconds
        self.dport, self.seed = FIRST_DPORT, 0
        self.folder = Path(tempfile.mkdtemp(prefix="srfabric-shares-"))

    def window(self, instances: list[ServeProcess], idle_s: float | None = None) -> dict[str, Any]:
        """Each instance's CPU seconds and setups over ``RATE`` new flows/s, or over ``idle_s`` of none."""
        pids = [serve.process.pid for serve in instances if serve.process is not None]
        machine = cpu_loop_ms()  # the machine's speed as the window begins (a virtual machine's drifts)
        cpu, made, began = [process_runtime_s(pid) for pid in pids], [counted(s) for s in instances], time.monotonic()
        if idle_s is None:
            self.seed += 1
            plan = flow_plan(sorted(self.fabric.spec.hosts), round(RATE * self.seconds), RATE, self.seed)
            send_flows(self.lab, self.fabric, plan, self.dport)
            self.dport += 1
        else:
            time.sleep(idle_s)
        wall, now = time.monotonic() - began, [counted(s) for s in instances]
        offered = 0 if idle_s is not None else round(RATE * self.seconds)
        return {"wall_s": wall, "cpu_loop_ms": machine, "offered": offered,
                "cpu_s": [process_runtime_s(pid) - used for pid, used in zip(pids, cpu, strict=True)],
                **{key: [after[key] - before[key] for before, after in zip(made, now, strict=True)] for key in COUNTED}}

    def configuration(self, instances: list[ServeProcess]) -> dict[str, Any]:
        """Loaded, then idle as long: CPU per new flow net of the idle window."""
        busy = self.window(instances)
        idle = self.window(instances, busy["wall_s"])
        net = sum(busy["cpu_s"]) - sum(idle["cpu_s"]) * busy["wall_s"] / idle["wall_s"]
        flows = busy["offered"]  # the same for either configuration; the setups each instance made are beside it
        return {"idle": idle, "busy": busy, "flows": flows, "setups": sum(busy["setups"]),
                "cpu_per_flow_ms": 1e3 * net / flows, "gross_cpu_per_flow_ms": 1e3 * sum(busy["cpu_s"]) / flows,
                "cores": [round(c / busy["wall_s"], 3) for c in busy["cpu_s"]],
                "setups_per_s": sum(busy["setups"]) / busy["wall_s"]}

    def stream(self, source: str, destination: str, name: str) -> tuple[Path, Path]:
        """Numbered UDP frames, ``PPS`` a second for ``STREAM_S``; (received file, sent file)."""
        received, sent = self.folder / f"{name}.received", self.folder / f"{name}.sent"
        for path in (received, sent):
            path.unlink(missing_ok=True)
        receive, send = self.folder / f"{name}-receive.py", self.folder / f"{name}-send.py"
        port = STREAM_PORT + len(name)
        receive.write_text(RECEIVE.format(port=port, out=received))
        send.write_text(SEND.format(count=int(STREAM_S * PPS), rate=PPS, dst=self.fabric.spec.hosts[destination].ip,
                                    port=port, out=sent))
        self.lab.spawn(["python3", str(receive)], ns=self.fabric.namespaces[destination])
        time.sleep(0.5)
        self.lab.spawn(["python3", str(send)], ns=self.fabric.namespaces[source])
        return received, sent

    def kill(self) -> dict[str, Any]:
        """SIGKILL the second instance under two streams: the leader's take-over, and what each stream lost."""
        hosts = self.fabric.spec.hosts
        theirs = sorted(h for h, host in hosts.items() if self.fabric.bridges[host.switch] in self.edges)
        ours = sorted(set(hosts) - set(theirs))
        files = {"kept": self.stream(ours[0], ours[-1], "kept"), "its": self.stream(theirs[0], ours[1], "its")}
        time.sleep(1.0)
        self.second.kill()
        took = wait_for(lambda: self.edges <= masters(self.leader), "the killed instance's edges taken")
        row: dict[str, Any] = {"takeover_s": took}
        for name, (received, sent) in files.items():
            wait_for(lambda r=received, s=sent: r.exists() and s.exists(), f"stream {name} done", 30.0, 0.2)
            total = int(sent.read_text())
            row[f"{name}_sent"], row[f"{name}_lost"] = total, total - len(set(received.read_text().split()))
        if row["kept_lost"] or row["its_lost"]:  # what the instances said, to tell why
            row["logs"] = {"leader": self.leader.output()[-LOG_TAIL:], "second": self.second.output()[-LOG_TAIL:]}
        return row

    def restart(self) -> None:
        """Start the second instance again; once it holds its edges, a second of new flows warms its caches (the
        route cache a restart empties), unmeasured, as the leader's were warm when it was measured alone."""
        self.second.start()
        wait_for(lambda: masters(self.second) == self.edges and not masters(self.leader) & self.edges,
                 "the restarted instance's edges taken back")
        self.warm()

    def warm(self) -> None:
        """A second of new flows, unmeasured."""
        self.seed += 1
        send_flows(self.lab, self.fabric, flow_plan(sorted(self.fabric.spec.hosts), round(RATE), RATE, self.seed),
                   self.dport)
        self.dport += 1

    def repetition(self, number: int) -> dict[str, Any]:
        both = [self.leader, self.second]
        if number % 2:
            two = self.configuration(both)
            killed = self.kill()
            one = self.configuration([self.leader])
            self.restart()
        else:
            killed = self.kill()
            one = self.configuration([self.leader])
            self.restart()
            two = self.configuration(both)
        return {"repeat": number, "two": two, "one": one, **killed,
                "ratio": two["cpu_per_flow_ms"] / one["cpu_per_flow_ms"],
                # each against the machine's speed as its window began: what is left of the ratio when the two
                # windows ran on a faster and a slower machine
                "ratio_speed_adjusted": (two["cpu_per_flow_ms"] / two["busy"]["cpu_loop_ms"])
                / (one["cpu_per_flow_ms"] / one["busy"]["cpu_loop_ms"])}


def shorter_backoff() -> None:
    """Open vSwitch tries a lost controller again after up to 8 s; 1 s, so that a restart is back soon."""
    found = subprocess.run(["ovs-vsctl", "--bare", "--columns=_uuid", "find", "Controller"], capture_output=True,
                           text=True, check=True).stdout.split()
    for uuid in found:
        subprocess.run(["ovs-vsctl", "set", "Controller", uuid, "max_backoff=1000"], check=True)


def run_shares(quick: bool, say: Any = print) -> list[dict[str, Any]]:
    """The repetitions' rows (see the module's docstring)."""
    spec = fat_tree(K)
    with ExitStack() as stack:
        url = stack.enter_context(postgres_cluster())
        lab = stack.enter_context(NetLab())
        edges = [lab.name(name) for name in claimed(spec)]
        reactive = ("--reactive", "--flow-idle-timeout", str(IDLE_TIMEOUT_S))
        leader = stack.enter_context(ServeProcess(url, extra_args=reactive))
        second = stack.enter_context(ServeProcess(url, extra_args=(*reactive, "--edges", ",".join(edges))))
        targets = f"tcp:127.0.0.1:{leader.openflow_port} tcp:127.0.0.1:{second.openflow_port}"
        fabric = stack.enter_context(LabFabric(lab, spec, peer=targets,
                                               peer_ready=lambda: discovered(spec, (leader, second))))
        shorter_backoff()
        with leader.client() as client:
            wait_for(lambda: len(client.get("/v2.0/srfabric/fabric")["fabric"]["hosts"]) == len(spec.hosts),
                     "every host learned", poll=0.2)
        bench = Bench(lab, fabric, leader, second, edges, QUICK_SECONDS if quick else SECONDS)
        bench.warm()
        rows = []
        for number in range(1, (QUICK_REPEATS if quick else REPEATS) + 1):
            rows.append(bench.repetition(number))
            say(f"scale-out {number}: CPU per flow two/one {rows[-1]['ratio']:.3f}, take-over "
                f"{rows[-1]['takeover_s'] * 1e3:.0f} ms, lost {rows[-1]['kept_lost']} of {rows[-1]['kept_sent']}")
        return json.loads(json.dumps(rows))


def spread(values: list[float]) -> dict[str, float]:
    low, middle, high = quartiles(values)
    return {"median": middle, "lower_quartile": low, "upper_quartile": high}


def summarise_shares(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary's scale-out keys: the ratio and the take-over (medians with their spread), and beside them
    each configuration's CPU per flow, rate and cores, and the frames the streams lost."""
    if not rows:
        return {"two_instances": "not run (--quick: tests/integration/api/test_shared_fabric.py is its quick form)"}
    ratio, takeover = spread([r["ratio"] for r in rows]), spread([r["takeover_s"] for r in rows])
    return {
        "two_instances_cpu_per_flow_ratio": ratio, "takeover_s": takeover,
        "two_instances_ratio_speed_adjusted": spread([r["ratio_speed_adjusted"] for r in rows]),
        "two_instances": {
            "fabric": f"fat-tree k={K} of Open vSwitch (userspace), every bridge connected to both instances; the "
                      "second claims the edges of pods 3 and 4",
            "offered_new_flows_per_s": RATE, "repeats": len(rows),
            **{f"cpu_per_flow_ms_{n}": spread([r[n]["cpu_per_flow_ms"] for r in rows]) for n in ("one", "two")},
            **{f"gross_cpu_per_flow_ms_{n}": spread([r[n]["gross_cpu_per_flow_ms"] for r in rows])
               for n in ("one", "two")},
            **{f"setups_per_s_{n}": spread([r[n]["setups_per_s"] for r in rows]) for n in ("one", "two")},
            "cores_two_by_process": [spread([r["two"]["cores"][i] for r in rows]) for i in (0, 1)],
            "cores_one": spread([r["one"]["cores"][0] for r in rows]),
            "frames_lost_not_owned": sum(r["kept_lost"] for r in rows),
            "frames_sent_not_owned": sum(r["kept_sent"] for r in rows),
            "frames_lost_owned": sum(r["its_lost"] for r in rows),
            "frames_sent_owned": sum(r["its_sent"] for r in rows),
            "ratio_goal": f"at most {RATIO_GOAL}, judged on the upper quartile",
            "ratio_met": ratio["upper_quartile"] <= RATIO_GOAL,
            "takeover_goal": f"under {TAKEOVER_GOAL_S} s, judged on the upper quartile",
            "takeover_met": takeover["upper_quartile"] < TAKEOVER_GOAL_S,
        },
    }
