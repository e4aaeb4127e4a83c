"""What the lab boots: the kernel, its initramfs, the guest's scripts and QEMU's arguments (pure, no I/O but reads).

The initramfs holds static busybox and the modules that reach the root file
system (virtio PCI, 9p, overlay). Its ``/init`` mounts this machine's ``/``
read-only over virtio-9p, puts a tmpfs overlay on it, mounts the control share
and switches root to run ``guest-init.sh`` from that share.

Examples
--------
>>> deps = {"a.ko": ["b.ko", "c.ko"], "b.ko": ["c.ko"], "c.ko": []}
>>> load_order(["a.ko"], deps)
['c.ko', 'b.ko', 'a.ko']
>>> lab = LabConfig(kernel=Path("/boot/vmlinuz-6.1.0-56-amd64"), modules=Path("/lib/modules/6.1.0-56-amd64"))
>>> argv = qemu_argv(lab, Path("/tmp/i.cpio"), Path("/tmp/ctl"))
>>> argv[argv.index("-icount") + 1], "tsc=reliable" in argv[argv.index("-append") + 1]
('shift=0,sleep=off', True)
>>> [word for word in argv[argv.index("-append") + 1].split() if word.startswith(("tsc", "transparent"))]
['tsc=reliable', 'transparent_hugepage=never']
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from srfabric.errors import ModelError
from srfabric_tools.kernel_lab.cpio import EXECUTABLE, REGULAR, Tree

QEMU = "qemu-system-x86_64"
BUSYBOX = Path("/bin/busybox")
# What the initramfs must load to reach the root: 9p over virtio PCI, and the overlay.
BOOT_MODULES = ("virtio_pci", "9pnet_virtio", "9p", "overlay")
# What the guest needs beyond that; loaded from the host's module tree once the root is up.
# tun: Open vSwitch's userspace datapath opens /dev/net/tun for a bridge's own port (bench datapaths runs both).
GUEST_MODULES = ("sch_taprio", "sch_etf", "sch_mqprio", "openvswitch", "veth", "sch_htb", "sch_ingress", "tun")
CONTROL_MOUNT = "/mnt/srfabric-lab"
MSIZE = 512000
TIMINGS = ("deterministic", "realtime")
OVS_START = "/usr/share/openvswitch/scripts/ovs-ctl start --system-id=random --delete-bridges >/dev/null 2>&1"


@dataclass(frozen=True)
class LabConfig:
    """How to boot: ``deterministic`` timing counts instructions (1 ns each, idle time skipped)."""

    kernel: Path
    modules: Path
    memory_mb: int = 3072
    timing: str = "deterministic"
    shares: tuple[Path, ...] = ()
    extra_cmdline: str = ""

    def __post_init__(self) -> None:
        if self.timing not in TIMINGS:
            raise ModelError("timing", f"must be one of {', '.join(TIMINGS)}, got {self.timing!r}")
        if not 256 <= self.memory_mb <= 16384:
            raise ModelError("memory_mb", f"must be in 256..16384, got {self.memory_mb}")


@dataclass(frozen=True)
class GuestCommand:
    """The command the guest runs, where and with which environment."""

    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)
    start_ovs: bool = False  # Open vSwitch with its kernel datapath, started before the command


def find_kernel(boot: Path = Path("/boot"), library: Path = Path("/lib/modules")) -> tuple[Path, Path]:
    """The newest ``vmlinuz-*`` whose module tree has taprio, and that tree."""
    for kernel in sorted(boot.glob("vmlinuz-*"), reverse=True):
        modules = library / kernel.name.removeprefix("vmlinuz-")
        if (modules / "modules.dep").exists() and any(modules.glob("kernel/net/sched/sch_taprio.ko*")):
            return kernel, modules
    raise ModelError("kernel", f"no {boot}/vmlinuz-* with sch_taprio in {library}; install linux-image-amd64")


def parse_modules_dep(text: str) -> dict[str, list[str]]:
    """``modules.dep`` as {module path: the paths it needs}."""
    deps: dict[str, list[str]] = {}
    for line in text.splitlines():
        if ":" in line:
            module, _, needs = line.partition(":")
            deps[module.strip()] = needs.split()
    return deps


def module_path(name: str, deps: Mapping[str, Sequence[str]]) -> str:
    """The path in ``modules.dep`` of module ``name`` (``-`` and ``_`` are the same in names)."""
    wanted = name.replace("-", "_")
    for path in deps:
        stem = Path(path).name.split(".ko")[0].replace("-", "_")
        if stem == wanted:
            return path
    raise ModelError("modules", f"module {name!r} is not in modules.dep")


def load_order(roots: Sequence[str], deps: Mapping[str, Sequence[str]]) -> list[str]:
    """Every module ``roots`` need, each after the modules it depends on."""
    order: list[str] = []

    def visit(module: str) -> None:
        if module in order:
            return
        for need in deps.get(module, ()):
            visit(need)
        order.append(module)

    for root in roots:
        visit(root)
    return order


def initramfs_init(modules: Sequence[str], shares: Sequence[Path]) -> str:
    """``/init`` of the initramfs: load ``modules``, build the overlay root, switch to the guest script."""
    options = f"trans=virtio,version=9p2000.L,msize={MSIZE},cache=loose"
    lines = [
        "#!/bin/busybox sh",
        "/bin/busybox --install -s /bin",
        "mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev",
        *(f"insmod /modules/{Path(module).name}" for module in modules),
        "mkdir -p /lower /rw /newroot",
        f"mount -t 9p -o ro,{options} hostroot /lower || exec sh",
        "mount -t tmpfs -o mode=0755 tmpfs /rw && mkdir -p /rw/upper /rw/work",
        "mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || exec sh",
        # /run starts empty (no stale pid files of the host's daemons); /tmp keeps the host's files
        # (a checkout or a share may live there), its changes in the overlay like everything else.
        "mount -t tmpfs tmpfs /newroot/run",
        f"mkdir -p /newroot{CONTROL_MOUNT}",
        f"mount -t 9p -o {options} control /newroot{CONTROL_MOUNT}",
    ]
    for index, share in enumerate(shares):
        target = shlex.quote(f"/newroot{share}")
        lines += [f"mkdir -p {target}", f"mount -t 9p -o {options} share{index} {target}"]
    lines += [
        "umount /proc /sys /dev",
        f"exec switch_root /newroot /bin/bash {CONTROL_MOUNT}/guest-init.sh",
    ]
    return "\n".join(lines) + "\n"


def guest_init(command: GuestCommand, modules: Sequence[str] = GUEST_MODULES) -> str:
    """The script the guest runs as PID 1 once the overlay is its root: set up, run, record, power off."""
    exports = "\n".join(f"export {name}={shlex.quote(value)}" for name, value in sorted(command.env.items()))
    control = CONTROL_MOUNT
    return f"""#!/bin/bash
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm && mount -t devpts devpts /dev/pts && mount -t tmpfs tmpfs /dev/shm
mount -t bpf bpf /sys/fs/bpf; mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
for module in {' '.join(modules)}; do modprobe -q $module; done
hostname srfabric-lab; ip link set lo up
export HOME=/root TERM=dumb SRFABRIC_KERNEL_LAB=1
{exports}
{OVS_START if command.start_ovs else ""}
echo SRFABRIC-LAB-START
if cd {shlex.quote(command.cwd)}; then
  bash {control}/command.sh 2>&1 | tee {control}/output.log
  echo ${{PIPESTATUS[0]}} > {control}/rc
else
  echo 125 > {control}/rc
fi
sync
echo SRFABRIC-LAB-END
echo o > /proc/sysrq-trigger
/bin/busybox poweroff -f
"""


def command_script(command: GuestCommand) -> str:
    """``command.sh``: the user's command, quoted word by word."""
    return "exec " + " ".join(shlex.quote(word) for word in command.argv) + "\n"


def initramfs(lab: LabConfig, busybox: Path = BUSYBOX) -> bytes:
    """The initramfs archive for ``lab`` (reads busybox and the modules)."""
    deps = parse_modules_dep((lab.modules / "modules.dep").read_text())
    order = load_order([module_path(name, deps) for name in BOOT_MODULES], deps)
    tree = Tree()
    for folder in ("proc", "sys", "dev", "tmp"):
        tree.add(f"{folder}/.keep", REGULAR)
    tree.add("bin/busybox", EXECUTABLE, busybox.read_bytes())
    for module in order:
        if not module.endswith(".ko"):
            raise ModelError("modules", f"{module} is compressed; the initramfs loads plain .ko files only")
        tree.add(f"modules/{Path(module).name}", REGULAR, (lab.modules / module).read_bytes())
    tree.add("init", EXECUTABLE, initramfs_init(order, lab.shares).encode())
    return tree.archive()


def qemu_argv(lab: LabConfig, initrd: Path, control: Path) -> list[str]:
    """QEMU's command line: TCG, one CPU, the host root read-only, the control share and ``lab.shares``."""
    # No transparent huge pages: khugepaged's periodic collapse of pages stalled the one emulated CPU, real-time
    # talkers too, for a run of their slots (tsn-protect's runs; the lab page has them).
    cmdline = ("console=ttyS0 panic=-1 quiet loglevel=3 tsc=reliable mitigations=off transparent_hugepage=never "
               + lab.extra_cmdline)
    argv = [
        QEMU, "-accel", "tcg", "-m", str(lab.memory_mb), "-smp", "1", "-cpu", "max",
        "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
        "-kernel", str(lab.kernel), "-initrd", str(initrd), "-append", cmdline.strip(),
        "-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot",
        "-fsdev", f"local,id=control,path={control},security_model=none",
        "-device", "virtio-9p-pci,fsdev=control,mount_tag=control",
    ]
    for index, share in enumerate(lab.shares):
        argv += [
            "-fsdev", f"local,id=share{index},path={share},security_model=none,multidevs=remap",
            "-device", f"virtio-9p-pci,fsdev=share{index},mount_tag=share{index}",
        ]
    if lab.timing == "deterministic":
        argv += ["-icount", "shift=0,sleep=off", "-rtc", "clock=vm"]
    return argv
