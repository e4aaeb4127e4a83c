"""SIGTERM stops a long-running command as Ctrl-C does, removing what it made (issue 58): ``srfabric lab``
mid-experiment, and ``srfabric serve``. (``up`` is held to it in ``test_up.py``, ``kernel-lab`` in
``tests/unit/tools/kernel_lab/test_sigterm.py``.)"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from srfabric_tools.bench.peer_controller import free_port

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="builds namespaces and OVS bridges")]


def made_by(pid: int) -> list[str]:
    """Namespaces, bridges and links named with the prefix a ``NetLab`` of process ``pid`` uses."""
    prefix = f"l{pid % 100000}"
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    bridges = subprocess.run(["ovs-vsctl", "list-br"], capture_output=True, text=True).stdout.split()
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    return [n for n in namespaces + bridges if n.startswith(prefix)] + [
        line for line in links.splitlines() if f": {prefix}" in line]


def test_sigterm_stops_a_lab_experiment_and_removes_its_namespaces() -> None:
    lab = subprocess.Popen([sys.executable, "-m", "srfabric", "lab", "shaper", "--quick", "--out", "/tmp"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not made_by(lab.pid) and lab.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert made_by(lab.pid), "the experiment made nothing to stop"
        lab.send_signal(signal.SIGTERM)
        assert lab.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if lab.poll() is None:
            lab.kill()
            lab.wait()
    assert made_by(lab.pid) == []
    assert "Traceback" not in (lab.stderr.read() if lab.stderr else "")


def test_sigterm_stops_serve_and_frees_its_ports() -> None:
    api, openflow = free_port(), free_port()
    serve = subprocess.Popen([sys.executable, "-m", "srfabric", "serve", "--db", "sqlite:///:memory:", "--no-auth",
                              "--port", str(api), "--openflow-host", "127.0.0.1", "--openflow-port", str(openflow),
                              "--openflow-insecure"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert serve.stdout is not None
        serve.stdout.readline()  # its start line: the API listens
        serve.send_signal(signal.SIGTERM)
        assert serve.wait(timeout=30) == 0
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()
    for port in (api, openflow):
        with socket.socket() as again:
            again.bind(("127.0.0.1", port))  # nothing holds it any more
    assert "Traceback" not in (serve.stderr.read() if serve.stderr else "")
