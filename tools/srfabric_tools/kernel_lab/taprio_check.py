"""Check rendered taprio commands against a real kernel booted under QEMU.

This machine's kernel has no taprio, so the commands are run by a Debian
kernel (package ``linux-image-amd64``) in ``qemu-system-x86_64 -accel tcg``
with a tiny initramfs: static busybox, the host's ``tc`` and ``ip`` with their
libraries, and the ``sch_taprio`` and ``dummy`` modules. Each command gets a
dummy device with 8 transmit queues named like the port it was made for.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from srfabric.errors import ModelError
from srfabric_tools.kernel_lab.boot import BUSYBOX, QEMU
from srfabric_tools.kernel_lab.boot import find_kernel as lab_find_kernel
from srfabric_tools.kernel_lab.cpio import EXECUTABLE, REGULAR, Tree

BINARIES = (Path("/usr/sbin/tc"), Path("/usr/sbin/ip"))
MODULES = ("kernel/net/sched/sch_taprio.ko", "kernel/drivers/net/dummy.ko")
EMATCH_MAP = Path("/etc/iproute2/ematch_map")
SHOW_QDISC = "/usr/sbin/tc qdisc show dev {name} | head -c 600; echo"
RESULT = re.compile(r"SRFABRIC-RESULT (\d+) (\d+)")


@dataclass(frozen=True)
class Verdict:
    """Whether the guest kernel accepted command ``index``, with what tc printed and ``tc qdisc show``."""

    index: int
    interface: str
    accepted: bool
    output: str


def find_kernel() -> tuple[Path, Path]:
    """The newest ``/boot/vmlinuz-*`` that has its module tree, and that tree."""
    return lab_find_kernel()


def _libraries(binary: Path) -> set[Path]:
    listing = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    return {Path(word) for word in listing.split() if word.startswith("/")}


def build_initramfs(commands: list[tuple[str, str]], modules: Path, module_list: tuple[str, ...] = MODULES,
                    show: str = SHOW_QDISC) -> bytes:
    """The guest's initramfs: ``commands`` are (interface, command) pairs, a command of one or more lines; ``show``
    (with ``{name}``) prints what the interface holds after its command."""
    tree = Tree()
    for folder in ("proc", "sys", "tmp", "dev", "bin"):
        tree.add(f"{folder}/.keep", REGULAR)
    tree.add("bin/busybox", EXECUTABLE, BUSYBOX.read_bytes())
    libraries: set[Path] = set()
    for binary in BINARIES:
        tree.add(f"usr/sbin/{binary.name}", EXECUTABLE, binary.read_bytes())
        libraries |= _libraries(binary)
    for library in sorted(libraries):
        tree.add(str(library.resolve()), EXECUTABLE, library.resolve().read_bytes())
        if library.resolve() != library:
            tree.add(str(library), EXECUTABLE, library.resolve().read_bytes())
    if EMATCH_MAP.exists():  # tc reads the ematch kinds' numbers from it
        tree.add(str(EMATCH_MAP).lstrip("/"), REGULAR, EMATCH_MAP.read_bytes())
    for module in module_list:
        tree.add(f"modules/{Path(module).name}", REGULAR, (modules / module).read_bytes())
    lines = [
        "#!/bin/busybox sh",
        "/bin/busybox --install -s /bin",
        "mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev",
        "for m in /modules/*.ko; do insmod $m; done",
    ]
    for index, (interface, command) in enumerate(commands):
        # busybox's shell prefers its own applets, so the real tc is named by its path.
        real = "\n".join("/usr/sbin/tc " + line.removeprefix("tc ") if line.startswith("tc ") else line
                         for line in command.splitlines())
        tree.add(f"cmd/{index}", REGULAR, ("set -e\n" + real + "\n").encode())
        name = shlex.quote(interface)
        lines += [
            f"/usr/sbin/ip link add {name} numtxqueues 8 numrxqueues 8 type dummy; /usr/sbin/ip link set {name} up",
            f"sh /cmd/{index} > /tmp/out 2>&1; echo SRFABRIC-RESULT {index} $?; cat /tmp/out",
            show.format(name=name),
        ]
    lines += ["echo SRFABRIC-DONE", "poweroff -f"]
    tree.add("init", EXECUTABLE, ("\n".join(lines) + "\n").encode())
    return tree.archive()


def check_in_qemu(commands: list[tuple[str, str]], timeout_s: float = 300.0, module_list: tuple[str, ...] = MODULES,
                  show: str = SHOW_QDISC) -> list[Verdict]:
    """Boot the guest, run every command, and report each one's verdict."""
    kernel, modules = find_kernel()
    with tempfile.TemporaryDirectory(prefix="srfabric-taprio-") as work:
        initramfs = Path(work) / "initramfs.cpio"
        initramfs.write_bytes(build_initramfs(commands, modules, module_list, show))
        argv = [
            QEMU, "-accel", "tcg", "-m", "512", "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
            "-kernel", str(kernel), "-initrd", str(initramfs), "-append", "console=ttyS0 panic=-1 quiet",
        ]
        try:
            env = os.environ | {"TERM": "dumb"}
            run = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env)
        except FileNotFoundError:
            raise ModelError("qemu", f"{QEMU} is not installed (apt: qemu-system-x86)") from None
        except subprocess.TimeoutExpired:
            raise ModelError("qemu", f"the guest did not finish in {timeout_s:.0f} s") from None
    return parse_console(run.stdout, commands)


def parse_console(console: str, commands: list[tuple[str, str]]) -> list[Verdict]:
    """Verdicts from the guest's console; raises if the guest stopped before the end."""
    if "SRFABRIC-DONE" not in console:
        tail = console.strip().splitlines()[-5:]
        raise ModelError("qemu", "the guest did not run to the end: " + " | ".join(tail))
    verdicts: list[Verdict] = []
    lines = console.replace("\r", "").splitlines()
    for at, line in enumerate(lines):
        match = RESULT.search(line)
        if not match:
            continue
        index, code = int(match.group(1)), int(match.group(2))
        following = []
        for later in lines[at + 1 :]:
            if RESULT.search(later) or "SRFABRIC-DONE" in later:
                break
            following.append(later)
        verdicts.append(Verdict(index, commands[index][0], code == 0, "\n".join(following).strip()))
    return verdicts
