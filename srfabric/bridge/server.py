"""netconfd for one bridge, as the agent starts it: the pinned IEEE modules (``--yang``, loaded from there, never
copied; the one netconfd cannot read as published, ``ieee802-dot1q-psfp``, rewritten into the bridge's state
folder with the same schema tree: ``yang_inline``), the SIL library (``make -C bridge``), a startup configuration
that holds every port's capability leaves and the bridge component's PSFP limits (the published ``must``
statements check each edit against them), candidate datastore and confirmed
commit (netconfd's defaults). With ``--sshd`` it also runs a private OpenSSH server whose ``netconf``
subsystem reaches this netconfd (for several bridges on one machine); otherwise the machine's sshd carries it
(``Subsystem netconf /usr/sbin/netconf-subsystem``, ``Port 830``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from srfabric.bridge.yang_inline import inlined, parse, to_text
from srfabric.bridge.yang_text import Statement
from srfabric.errors import ModelError
from srfabric.rules.yang.xml_document import to_config
from srfabric.tsn.gates.capabilities import PortCapabilities
from srfabric.tsn.gates.render import idle_table

PR_SET_PDEATHSIG = 1


def end_with_parent() -> None:
    """In a child before it runs: SIGTERM when the process that started it ends, however it ended (a bridge's
    netconfd and sshd do not outlive ``srfabric bridge serve``, even killed)."""
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


MODULES = ("ietf-interfaces", "iana-if-type", "ieee802-dot1q-bridge", "ieee802-dot1q-sched", "ieee802-dot1q-types",
           "ieee802-types", "ieee802-dot1q-sched-bridge", "ietf-yang-types", "ietf-inet-types",
           "ieee802-dot1q-psfp-bridge", "ieee802-dot1q-psfp", "ieee802-dot1q-stream-filters-gates",
           "ieee802-dot1q-stream-filters-gates-bridge", "ieee802-dot1cb-stream-identification",
           "ieee802-dot1cb-stream-identification-types")
LOADED = ("ieee802-dot1q-sched-bridge", "ieee802-dot1q-psfp-bridge", "ieee802-dot1cb-stream-identification")
SIL = Path(__file__).resolve().parents[2] / "build" / "bridge"


def startup_config(ports: dict[str, PortCapabilities], psfp: dict[str, Any] | None = None) -> str:
    """The configuration a bridge starts with: each port a bridge port whose table holds its capabilities, and
    with ``psfp`` (``startup_psfp``) its bridge component with its PSFP limits."""
    interfaces = [{"name": name, "type": "iana-if-type:ethernetCsmacd",
                   "ieee802-dot1q-bridge:bridge-port": {
                       "ieee802-dot1q-sched-bridge:gate-parameter-table": idle_table() | caps.to_yang()}}
                  for name, caps in sorted(ports.items())]
    return to_config({"ietf-interfaces:interfaces": {"interface": interfaces}, **(psfp or {})})


def module_folder(yang: Path, into: Path) -> Path:
    """A folder of the modules named as netconfd looks them up (``name.yang``), top level only (netconfd
    searches subfolders, and the qrev draft lies in one): each a link to its pinned file, or, where netconfd
    cannot read the published text (``yang_inline``), that module rewritten."""
    into.mkdir(parents=True, exist_ok=True)
    pinned: dict[str, Path] = {}
    for module in MODULES:
        found = sorted(yang.glob(f"{module}@*.yang"))
        if not found:
            raise ModelError("yang", f"{yang} has no {module}@<revision>.yang (the pinned modules' folder)")
        pinned[module] = found[-1]
    parsed = {module: _parsed(path) for module, path in pinned.items()}
    for module, path in pinned.items():
        target = into / f"{module}.yang"
        target.unlink(missing_ok=True)
        try:
            rewritten = inlined(parsed[module], parsed)
            text = None if rewritten is None else to_text(rewritten)
        except ModelError as error:
            raise ModelError(f"yang {path}", f"{error.field}: {error.message}") from None
        if text is None:
            target.symlink_to(path)
        else:
            target.write_text(f"// {path.name} rewritten for netconfd: srfabric.bridge.yang_inline\n{text}")
    return into


def _parsed(path: Path) -> Statement:
    try:
        return parse(path.read_text())
    except ModelError as error:
        raise ModelError(f"yang {path}", error.message) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ModelError(f"yang {path}", str(error)) from None


@dataclass
class BridgeServer:
    """One bridge's netconfd (and private sshd), by remembered process."""

    bridge: str
    state: Path
    yang: Path
    ports: dict[str, PortCapabilities]
    ssh_port: int = 830
    psfp: dict[str, Any] | None = None  # the bridge component with its PSFP limits (startup_psfp)
    sil: Path = SIL
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def socket(self) -> Path:
        return self.state / "ncxserver.sock"

    def start(self, fresh: bool = False) -> None:
        """Start netconfd; its startup configuration is kept across restarts unless ``fresh``."""
        if not (self.sil / "libsrfabric-bridge.so").exists():
            raise ModelError("sil", f"{self.sil}/libsrfabric-bridge.so is missing: build it with make -C bridge")
        netconfd = shutil.which("netconfd")
        if netconfd is None:
            raise ModelError("netconfd", "not installed (Debian's netconfd package; the bootstrap installs it)")
        self.state.mkdir(parents=True, exist_ok=True)
        modules = module_folder(self.yang, self.state / "modules")
        startup = self.state / "startup.xml"
        if fresh or not startup.exists():
            startup.write_text(startup_config(self.ports, self.psfp))
        self.socket.unlink(missing_ok=True)
        command = [netconfd, f"--modpath={modules}:{self.sil}", f"--runpath={self.sil}",
                   *(f"--module={module}" for module in LOADED), "--module=srfabric-bridge", f"--startup={startup}",
                   f"--ncxserver-sockname={self.socket}", "--superuser=root", f"--port={self.ssh_port}",
                   f"--log={self.state / 'netconfd.log'}", "--log-level=warn"]
        env = dict(os.environ, SRFABRIC_BRIDGE_STATE=str(self.state))
        self.processes.append(subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, preexec_fn=end_with_parent,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        (self.state / "netconfd.pid").write_text(f"{self.processes[-1].pid}\n")  # for a lab that pauses it
        self._wait_for(self.socket, "netconfd's socket")

    def start_sshd(self, authorized_keys: Path, listen: str = "127.0.0.1") -> None:
        """A private sshd on ``listen``:``ssh_port`` for this bridge only."""
        host_key = self.state / "ssh_host_ed25519_key"
        if not host_key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True,
                           capture_output=True, timeout=30)
        config = self.state / "sshd_config"
        config.write_text("\n".join([
            f"Port {self.ssh_port}", f"ListenAddress {listen}", f"HostKey {host_key}",
            f"PidFile {self.state / 'sshd.pid'}", f"AuthorizedKeysFile {authorized_keys}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no", "StrictModes no", "UsePAM no",
            f'Subsystem netconf "/usr/sbin/netconf-subsystem --ncxserver-sockname={self.ssh_port}@{self.socket}"',
            ""]))
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation folder
        self.processes.append(subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", str(config), "-E",
                                                str(self.state / "sshd.log")], stdin=subprocess.DEVNULL,
                                               preexec_fn=end_with_parent))

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
        self.processes.clear()

    def _wait_for(self, path: Path, what: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not path.exists():
            if self.processes[-1].poll() is not None or time.monotonic() > deadline:
                log = self.state / "netconfd.log"
                tail = log.read_text()[-600:] if log.exists() else ""
                raise ModelError(f"bridge {self.bridge}", f"{what} did not appear: {tail.strip()}")
            time.sleep(0.02)
