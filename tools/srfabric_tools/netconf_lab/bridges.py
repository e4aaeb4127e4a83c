"""A lab of bridges, each a real ``srfabric bridge serve`` with its own netconfd and sshd on 127.0.0.1, made in a
folder of its own and stopped by the process handles kept (never by name). One client key is made for the lab;
``access()`` is what srfabric's bridges file would say. ``stop``, ``start`` (``fresh``: without its last
configuration, as a replaced bridge) and ``pause``/``resume`` (netconfd frozen mid-commit) make the faults."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from srfabric.bridge.server import end_with_parent
from srfabric.errors import SrfabricError
from srfabric.model.management import BridgeAccess
from srfabric.model.topo import TopoSpec
from srfabric_tools.procs import terminate

YANG = Path(__file__).resolve().parents[3].parent / "shared" / "yang"


def pinned_yang() -> Path:
    if not YANG.is_dir():
        raise SrfabricError("yang", f"the pinned YANG modules are not at {YANG} (shared/yang beside the checkout)")
    return YANG


def topology_ports(topo: TopoSpec) -> dict[str, list[str]]:
    """Every switch's ports as Mininet names them (``s1-eth2``): each link's end and each host's.

    >>> from srfabric.model.topo import tsn_fig7
    >>> topology_ports(tsn_fig7(1))
    {'s1': ['s1-eth1', 's1-eth2', 's1-eth3'], 's2': ['s2-eth1', 's2-eth2'], 's3': ['s3-eth1', 's3-eth2'], \
's4': ['s4-eth1', 's4-eth2', 's4-eth3']}
    """
    return {name: sorted(f"{name}-eth{port}" for port in ends) for name, ends in topo.port_ends().items()}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class LabBridge:
    name: str
    ports: list[str]
    ssh_port: int
    state: Path
    process: subprocess.Popen[bytes] | None = None


@dataclass
class BridgeLab:
    """``bridges``: name -> gated ports. ``apply``: taprio or none (the host kernel has no taprio)."""

    bridges: dict[str, list[str]]
    folder: Path
    apply: str = "none"
    list_max: int = 256
    listen: str = "127.0.0.1"  # where the bridges' sshd listen (another namespace reaches them there)
    timeout_s: float = 10.0  # each NETCONF answer's limit (a busy machine, or an emulated CPU, needs more)
    start_timeout_s: float = 60.0
    made: dict[str, LabBridge] = field(default_factory=dict)

    def __enter__(self) -> BridgeLab:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.key = self.folder / "client_key"
        if not self.key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True,
                           capture_output=True, timeout=30)
        (self.folder / "authorized_keys").write_text(Path(f"{self.key}.pub").read_text())
        try:
            for name, ports in self.bridges.items():
                self.made[name] = LabBridge(name, ports, free_port(), self.folder / name)
                self.start(name, fresh=True)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def access(self) -> dict[str, BridgeAccess]:
        return {name: BridgeAccess(name, self.listen, "root", bridge.ssh_port, key_file=str(self.key),
                                   timeout_s=self.timeout_s) for name, bridge in self.made.items()}

    def bridges_file(self, path: Path) -> Path:
        """The bridges file ``srfabric serve --gates netconf --bridges`` reads, for this lab."""
        path.write_text(json.dumps({"bridges": {name: {"host": access.host, "port": access.port, "username": "root",
                                                       "key_file": access.key_file, "timeout_s": access.timeout_s}
                                                for name, access in self.access().items()}}))
        return path

    def start(self, name: str, fresh: bool = False) -> None:
        bridge = self.made[name]
        command = [sys.executable, "-m", "srfabric", "bridge", "serve", "--name", name, "--yang", str(pinned_yang()),
                   "--state", str(bridge.state), "--apply", self.apply, "--sshd", "--ssh-port", str(bridge.ssh_port),
                   "--listen", self.listen,
                   "--authorized-keys", str(self.folder / "authorized_keys"), "--list-max", str(self.list_max),
                   *(word for port in bridge.ports for word in ("--port", port)), *(["--fresh"] if fresh else [])]
        bridge.state.mkdir(parents=True, exist_ok=True)
        log = (bridge.state / "serve.log").open("ab")
        bridge.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          preexec_fn=end_with_parent)  # a killed benchmark leaves no bridge
        log.close()
        self._wait_listening(bridge)

    def stop(self, name: str) -> None:
        bridge = self.made[name]
        if bridge.process is not None:
            terminate(bridge.process, timeout=15)
            bridge.process = None

    def pause(self, name: str) -> None:
        """Freeze the bridge's netconfd (SIGSTOP, by the pid its server wrote): sessions hang, as mid-commit."""
        os.kill(self._netconfd(name), signal.SIGSTOP)

    def resume(self, name: str) -> None:
        os.kill(self._netconfd(name), signal.SIGCONT)

    def close(self) -> None:
        for name in list(self.made):
            with contextlib.suppress(OSError, ValueError):
                self.resume(name)
            self.stop(name)

    def _netconfd(self, name: str) -> int:
        return int((self.made[name].state / "netconfd.pid").read_text())

    def _wait_listening(self, bridge: LabBridge) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if bridge.process is not None and bridge.process.poll() is not None:
                break
            try:
                with socket.create_connection((self.listen, bridge.ssh_port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        log = (bridge.state / "serve.log").read_text()[-800:]
        raise SrfabricError(f"bridge {bridge.name}", f"did not come up on port {bridge.ssh_port}: {log}")
