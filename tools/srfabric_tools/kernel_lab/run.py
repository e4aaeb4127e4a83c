"""Boot the lab, run one command in it, and bring its output and exit code back."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from srfabric.errors import ModelError
from srfabric_tools.kernel_lab.boot import (
    QEMU,
    GuestCommand,
    LabConfig,
    command_script,
    find_kernel,
    guest_init,
    initramfs,
    qemu_argv,
)

# Variables the guest's command inherits; the rest of the host's environment stays outside.
START, END = "SRFABRIC-LAB-START", "SRFABRIC-LAB-END"
PASSED_ENV = ("PATH", "VIRTUAL_ENV", "PYTHONPATH", "LANG", "LC_ALL")


@dataclass(frozen=True)
class LabResult:
    """The command's exit code and output, and the whole console (kernel and init messages too)."""

    returncode: int
    output: str
    console: str


def lab_config(memory_mb: int = 3072, timing: str = "deterministic", shares: tuple[Path, ...] = ()) -> LabConfig:
    """A :class:`LabConfig` for the newest installed Debian kernel; refuses a missing QEMU by name."""
    if shutil.which(QEMU) is None:
        raise ModelError("qemu", f"{QEMU} is not installed (apt: qemu-system-x86)")
    kernel, modules = find_kernel()
    for share in shares:
        if not share.is_absolute() or not share.is_dir():
            raise ModelError("share", f"{share} must be an existing absolute directory")
    return LabConfig(kernel, modules, memory_mb, timing, shares)


def guest_command(argv: list[str], cwd: str | None = None, extra_env: dict[str, str] | None = None,
                  start_ovs: bool = False) -> GuestCommand:
    """``argv`` run in ``cwd`` (this process's by default) with the passed part of this environment."""
    if not argv:
        raise ModelError("command", "give the command to run after --")
    env = {name: os.environ[name] for name in PASSED_ENV if name in os.environ}
    env |= {name: value for name, value in os.environ.items() if name.startswith("SRFABRIC_")}
    env |= extra_env or {}
    return GuestCommand(tuple(argv), cwd or os.getcwd(), env, start_ovs)


def run_in_lab(
    lab: LabConfig, command: GuestCommand, timeout_s: float = 1800.0, echo: TextIO | None = None
) -> LabResult:
    """Boot, run ``command``, power off; ``echo`` gets the console as it comes (the command's output in it)."""
    with tempfile.TemporaryDirectory(prefix="srfabric-lab-") as work:
        control = Path(work) / "control"
        control.mkdir()
        (control / "guest-init.sh").write_text(guest_init(command))
        (control / "command.sh").write_text(command_script(command))
        initrd = Path(work) / "initramfs.cpio"
        initrd.write_bytes(initramfs(lab))
        argv = qemu_argv(lab, initrd, control)
        console: list[str] = []
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace", env=os.environ | {"TERM": "dumb"},
        )
        try:
            _pump(process, console, echo, timeout_s)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        text = "".join(console)
        rc_file = control / "rc"
        if not rc_file.exists():
            tail = " | ".join(text.strip().splitlines()[-5:])
            raise ModelError("kernel-lab", f"the guest stopped before the command finished: {tail}")
        output = (control / "output.log").read_text(errors="replace") if (control / "output.log").exists() else ""
        return LabResult(int(rc_file.read_text().strip() or 1), output, text)


def _pump(process: subprocess.Popen[str], console: list[str], echo: TextIO | None, timeout_s: float) -> None:
    import selectors
    import time

    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    echoing = False  # Only the command's part of the console: not the firmware's or the kernel's.
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ModelError("timeout_s", f"the guest did not finish in {timeout_s:.0f} s")
        if not selector.select(min(left, 1.0)):
            if process.poll() is not None:
                break
            continue
        line = process.stdout.readline()
        if not line:
            break
        console.append(line)
        if START in line:
            echoing = True
        elif END in line:
            echoing = False
        elif echoing and echo is not None:
            echo.write(line)
            echo.flush()
    process.wait()


def run_cli(argv: list[str], memory_mb: int, timing: str, shares: list[str], timeout_s: float,
            start_ovs: bool = False) -> int:
    """``srfabric kernel-lab run``: the command's output as it comes, then its exit code as ours."""
    lab = lab_config(memory_mb, timing, tuple(Path(share).resolve() for share in shares))
    # SIGTERM would end this process without its clean-up, leaving QEMU running: exit through it instead.
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        result = run_in_lab(lab, guest_command(argv, start_ovs=start_ovs), timeout_s, echo=sys.stdout)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return result.returncode


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
