"""What a ``srfabric up`` that was killed (SIGKILL, a crash) left behind, removed by the names and process ids
its state file remembers: its processes, its bridges and its switches' interfaces.

A killed ``up`` cannot run its own cleanup, and Mininet names links after switches (``s1-eth1``), so a later
fabric with the same switch names would fail to make its links ("File exists"). The next ``up`` calls
:func:`remove_leftovers` on the dead one's state before it builds anything.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

NET = Path("/sys/class/net")
OURS = ("srfabric", "mininet:")  # a remembered pid is killed only while its command line still says it is ours


def remembered_pids(state: dict[str, Any]) -> list[int]:
    """The process ids ``state`` names: the API server's, each host's and function's shell, then the other
    processes a testbed's record lists (its XDP agents, what it started in its nodes).

    >>> remembered_pids({"serve_pid": 7, "hosts": {"h1": {"pid": 8}}, "functions": {"v1": {"pid": 9}},
    ...                  "processes": [10, "x"]})
    [7, 8, 9, 10]
    """
    pids = [state.get("serve_pid")]
    for group in ("hosts", "functions"):
        nodes = state.get(group)
        pids += [node.get("pid") for node in nodes.values() if isinstance(node, dict)] if isinstance(nodes, dict) \
            else []
    others = state.get("processes")
    pids += others if isinstance(others, list) else []
    return [pid for pid in pids if isinstance(pid, int) and pid > 1]


def switch_interfaces(switches: list[str], present: list[str]) -> list[str]:
    """The interfaces among ``present`` that Mininet made for ``switches`` (``<switch>-eth<n>``).

    >>> switch_interfaces(["s1", "s2"], ["eth0", "s1-eth1", "s12-eth1", "s2-eth3", "s2-ethx"])
    ['s1-eth1', 's2-eth3']
    """
    return [name for name in present
            if any(name.startswith(f"{sw}-eth") and name[len(sw) + 4:].isdigit() for sw in switches)]


def remove_leftovers(state: dict[str, Any]) -> list[str]:
    """Kill the remembered processes that are still ours, delete the remembered bridges and their switches'
    interfaces; what was removed, one line each."""
    removed = []
    for pid in remembered_pids(state):
        with contextlib.suppress(OSError):
            if any(mark in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace") for mark in OURS):
                os.kill(pid, signal.SIGKILL)
                removed.append(f"process {pid}")
    switches = [sw for sw in state.get("switches", []) if isinstance(sw, str)]
    for bridge in switches:
        if subprocess.run(["ovs-vsctl", "--timeout=10", "br-exists", bridge], capture_output=True,
                          check=False).returncode != 0:
            continue
        subprocess.run(["ovs-vsctl", "--timeout=10", "del-br", bridge], capture_output=True, check=False)
        removed.append(f"bridge {bridge}")
    present = sorted(path.name for path in NET.iterdir()) if NET.is_dir() else []
    for name in switch_interfaces(switches, present):
        # A veth pair goes with either end: its peer may already be gone with the first.
        done = subprocess.run(["ip", "link", "del", name], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            removed.append(f"interface {name}")
    return removed
