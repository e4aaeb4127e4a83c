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

from srfabric.api.client import SfcClient
from srfabric.testbed.up import STATE

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and OVS bridges")]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_up_serves_runs_commands_and_cleans_up_on_sigterm() -> None:
    up = subprocess.Popen([sys.executable, "-m", "srfabric", "up", "--topo", "line:3", "--functions", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert up.stdout is not None
        lines = []
        deadline = time.monotonic() + 180
        while not any(line.startswith("  ready; ") for line in lines):
            line = up.stdout.readline()
            assert line and time.monotonic() < deadline, "".join(lines)
            lines.append(line)
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
        ping = subprocess.run([sys.executable, "-m", "srfabric", "host", "h1", "--", "ping", "-c1", "-W2", "h2"],
                              capture_output=True, text=True, timeout=30)
        assert ping.returncode == 0 and "1 received" in ping.stdout, ping.stdout + ping.stderr
        up.send_signal(signal.SIGTERM)
        assert up.wait(timeout=60) == 0
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    assert not STATE.exists()
    pids = [state["serve_pid"], *(h["pid"] for h in state["hosts"].values()),
            *(f["pid"] for f in state["functions"].values())]
    assert not [pid for pid in pids if alive(pid)]
    bridges = subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True).stdout.split()
    assert not set(bridges) & set(state["switches"])
