"""What the kernel lab boots is worked out without booting: modules, scripts, QEMU's arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from srfabric.errors import ModelError
from srfabric_tools.kernel_lab.boot import (
    CONTROL_MOUNT,
    GuestCommand,
    LabConfig,
    command_script,
    guest_init,
    initramfs_init,
    load_order,
    module_path,
    parse_modules_dep,
    qemu_argv,
)
from srfabric_tools.kernel_lab.cpio import newc

DEP = """kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/netfs/netfs.ko kernel/fs/fscache/fscache.ko
kernel/net/9p/9pnet.ko:
kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko kernel/drivers/virtio/virtio_ring.ko
kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko
kernel/fs/netfs/netfs.ko:
kernel/drivers/virtio/virtio_ring.ko:
kernel/fs/overlayfs/overlay.ko:
"""
LAB = LabConfig(kernel=Path("/boot/vmlinuz-x"), modules=Path("/lib/modules/x"))


def test_modules_load_after_what_they_need_and_once() -> None:
    deps = parse_modules_dep(DEP)
    roots = [module_path(name, deps) for name in ("9pnet_virtio", "9p", "overlay")]
    order = load_order(roots, deps)
    assert len(order) == len(set(order)) == 7
    for module, needs in deps.items():
        for need in needs:
            assert order.index(need) < order.index(module)


def test_an_unknown_module_is_named() -> None:
    with pytest.raises(ModelError, match="'sch_nothing'"):
        module_path("sch_nothing", parse_modules_dep(DEP))


def test_init_mounts_the_root_read_only_under_an_overlay_and_each_share_at_its_own_path() -> None:
    script = initramfs_init(["kernel/fs/9p/9p.ko"], [Path("/work/results")])
    assert "insmod /modules/9p.ko" in script
    assert "mount -t 9p -o ro,trans=virtio" in script and "hostroot /lower" in script
    assert "lowerdir=/lower,upperdir=/rw/upper" in script
    assert "share0 /newroot/work/results" in script
    assert script.rstrip().endswith(f"exec switch_root /newroot /bin/bash {CONTROL_MOUNT}/guest-init.sh")


def test_the_guest_runs_the_command_where_it_was_given_and_records_its_exit_code() -> None:
    command = GuestCommand(("python", "-c", "print('a b')"), "/work/main", {"SRFABRIC_X": "1 2"})
    script = guest_init(command)
    assert "cd /work/main" in script and "export SRFABRIC_X='1 2'" in script
    assert "modprobe -q $module" in script and "sch_taprio" in script
    assert "${PIPESTATUS[0]}" in script and "ovs-ctl" not in script
    assert "ovs-ctl start" in guest_init(GuestCommand(("true",), "/", start_ovs=True))
    assert command_script(command) == "exec python -c 'print('\"'\"'a b'\"'\"')'\n"


def test_deterministic_timing_counts_instructions_and_realtime_does_not() -> None:
    deterministic = qemu_argv(LAB, Path("/i"), Path("/c"))
    assert deterministic[deterministic.index("-icount") + 1] == "shift=0,sleep=off"
    assert "readonly=on" in deterministic[deterministic.index("-fsdev") + 1]
    realtime = qemu_argv(LabConfig(LAB.kernel, LAB.modules, timing="realtime"), Path("/i"), Path("/c"))
    assert "-icount" not in realtime


@pytest.mark.parametrize(("field", "kwargs"), [("timing", {"timing": "fast"}), ("memory_mb", {"memory_mb": 64})])
def test_bad_settings_are_refused_by_name(field: str, kwargs: dict[str, object]) -> None:
    with pytest.raises(ModelError, match=field):
        LabConfig(LAB.kernel, LAB.modules, **kwargs)  # type: ignore[arg-type]


def test_the_archive_pads_every_member_to_four_bytes() -> None:
    archive = newc([("a", 0o100644, b"xyz"), ("bb", 0o100644, b"")])
    assert len(archive) % 4 == 0
    assert archive.count(b"070701") == 3
