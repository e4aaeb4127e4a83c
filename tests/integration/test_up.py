"""``srfabric up`` starts a fabric under ``srfabric serve`` and keeps it; ``srfabric host`` runs a command on a
host; SIGTERM leaves no bridge, host process or server behind (root)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from srfabric.cli.client import SfcClient
from srfabric.up_state import read_up_state
from srfabric_tools.testbed.up import STATE
from srfabric_tools.testbed.up_leftovers import remove_leftovers

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and OVS bridges")]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start_up() -> tuple[subprocess.Popen[str], list[str]]:
    """``srfabric up --topo line:3 --functions 2`` and what it printed until it was ready."""
    up = subprocess.Popen([sys.executable, "-m", "srfabric", "up", "--topo", "line:3", "--functions", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert up.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 180
    while not any(line.startswith("  ready; ") for line in lines):
        line = up.stdout.readline()
        if not line or time.monotonic() > deadline:
            stop_up(up)
            raise AssertionError("".join(lines))
        lines.append(line)
    return up, lines


def stop_up(up: subprocess.Popen[str]) -> None:
    """SIGTERM, so up removes what it made; if it does not end, kill it and remove what its state file names
    (a failed test must not leave links that every later fabric would clash with)."""
    if up.poll() is None:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()
    state = read_up_state()
    if state and not alive(state.get("pid", 0)):
        remove_leftovers(state)
        STATE.unlink(missing_ok=True)


def test_up_serves_runs_commands_and_cleans_up_on_sigterm() -> None:
    up, lines = start_up()
    try:
        state = json.loads(STATE.read_text())
        with SfcClient(state["api"], state["token"]) as client:
            fabric = client.get("/v2.0/srfabric/fabric")["fabric"]
            assert len(fabric["switches"]) == 3 and len(fabric["links"]) == 4 and len(fabric["hosts"]) == 2
            assert {p["name"] for p in client.list("ports")} >= {"v1-in", "v1-out", "v2-in", "v2-out"}
            assert len(fabric["functions"]) == 2  # drawn from their ports, before any port pair
        # The tour as written: no --url or token (up's are used), hosts by up's names, options after the action.
        env = {k: v for k, v in os.environ.items() if k not in ("SRFABRIC_URL", "SRFABRIC_TOKEN")}
        made = subprocess.run([sys.executable, "-m", "srfabric", "stream", "create", "h1", "h2", "--period-ns",
                               "1000000", "--size-bytes", "200", "--udp-dst", "5001"], capture_output=True,
                              text=True, timeout=60, env=env)
        assert made.returncode == 0, made.stdout + made.stderr
        listed = subprocess.run([sys.executable, "-m", "srfabric", "stream", "list", "--url", state["api"],
                                 "--token", state["token"]], capture_output=True, text=True, timeout=60, env=env)
        assert listed.returncode == 0 and "s1" in listed.stdout, listed.stdout + listed.stderr
        ping = subprocess.run([sys.executable, "-m", "srfabric", "host", "h1", "--", "ping", "-c3", "-i0.2",
                               "-W3", "h2"], capture_output=True, text=True, timeout=30)
        assert ping.returncode == 0 and " 0 received" not in ping.stdout, ping.stdout + ping.stderr
        up.send_signal(signal.SIGTERM)
        assert up.wait(timeout=60) == 0
    finally:
        stop_up(up)
    assert not STATE.exists()
    pids = [state["serve_pid"], *(h["pid"] for h in state["hosts"].values()),
            *(f["pid"] for f in state["functions"].values())]
    assert not [pid for pid in pids if alive(pid)]
    bridges = subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True).stdout.split()
    assert not set(bridges) & set(state["switches"])


def test_an_up_after_one_was_killed_removes_what_that_one_left_and_starts() -> None:
    killed, _ = start_up()
    state = json.loads(STATE.read_text())
    killed.kill()  # no cleanup runs: its bridges, links and host shells stay
    killed.wait()
    links = [name for name in os.listdir("/sys/class/net") if name.startswith("s1-eth")]
    assert links
    up, lines = start_up()
    try:
        said = next(line for line in lines if "killed srfabric up left" in line)
        assert "bridge s1" in said and f"interface {sorted(links)[0]}" in said, said
        assert not [pid for pid in (state["serve_pid"], state["hosts"]["h1"]["pid"]) if alive(pid)]
        now = json.loads(STATE.read_text())
        with SfcClient(now["api"], now["token"]) as client:
            assert len(client.get("/v2.0/srfabric/fabric")["fabric"]["switches"]) == 3
    finally:
        stop_up(up)
    assert not [name for name in os.listdir("/sys/class/net") if name.startswith("s1-eth")]
