"""Build, load, pin, attach and unload the XDP objects (clang via ``make -C bpf``, then bpftool).

Each loaded object gets its own bpffs folder, ``<root>/<name>/progs/<program>``
and ``<root>/<name>/maps/<map>``, so every switch of a testbed has its own
tables. Commands are built as lists first (``load_command``) so tests and dry
runs can read them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from srfabric.errors import SrfabricError
from srfabric.xdp.bpf_syscall import PinnedMap, obj_get
from srfabric.xdp.layout import u32

REPO = Path(__file__).resolve().parents[2]
SOURCE_DIR = REPO / "bpf"
BUILD_DIR = REPO / "build" / "bpf"
BPFFS = Path("/sys/fs/bpf")
PIN_ROOT = BPFFS / "srfabric"
OBJECTS = {
    "redirect": "redirect.o",
    "mac-nibble": "sr_nibble.o",
    "mac-vlan-mpls": "sr_mpls.o",
    "lpm": "lpm_router.o",
    "sink": "sink.o",
    "generator": "generator.o",
    "frer": "frer_eliminate.o",
    "frer-replicate": "frer_replicate.o",
    "psfp-edge": "psfp_edge.o",
}
TC_OBJECTS = {"frer-replicate"}  # tc programs: their type comes from their section, not ``type xdp``


class XdpError(SrfabricError):
    """The XDP data plane could not be built, loaded or attached."""


def object_path(kind: str) -> Path:
    if kind not in OBJECTS:
        raise XdpError("object", f"unknown XDP object {kind!r}; choose one of {', '.join(OBJECTS)}")
    return BUILD_DIR / OBJECTS[kind]


def build() -> None:
    """Compile the programs when a source is newer than its object (``make -C bpf``)."""
    done = subprocess.run(["make", "-s", "-C", str(SOURCE_DIR)], capture_output=True, text=True)
    if done.returncode != 0:
        raise XdpError("bpf", f"building the XDP programs failed: {done.stderr.strip()[-400:]}")


def load_command(obj: Path, folder: Path, xdp: bool = True) -> list[str]:
    return ["bpftool", "prog", "loadall", str(obj), str(folder / "progs"), *(["type", "xdp"] if xdp else []),
            "pinmaps", str(folder / "maps")]


def _mount_bpffs() -> None:
    mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    if [str(BPFFS), "bpf"] not in mounts:
        subprocess.run(["mount", "-t", "bpf", "bpf", str(BPFFS)], check=False, capture_output=True)


@dataclass
class LoadedObject:
    """One object's pinned programs and maps; ``unload()`` removes the pins (and so the programs)."""

    kind: str
    folder: Path
    _maps: dict[str, PinnedMap] = field(default_factory=dict)
    _program_fds: dict[str, int] = field(default_factory=dict)

    def program(self, name: str) -> Path:
        path = self.folder / "progs" / name
        if not path.exists():
            raise XdpError("program", f"{self.kind} has no program {name!r}")
        return path

    def program_fd(self, name: str) -> int:
        """A descriptor for program ``name``, opened once and closed by ``unload()``."""
        if name not in self._program_fds:
            self._program_fds[name] = obj_get(self.program(name))
        return self._program_fds[name]

    def map(self, name: str) -> PinnedMap:
        if name not in self._maps:
            path = self.folder / "maps" / name
            if not path.exists():
                raise XdpError("map", f"{self.kind} has no map {name!r}")
            self._maps[name] = PinnedMap.open(path)
        return self._maps[name]

    def add_port(self, port: int, ifindex: int) -> None:
        """Make OpenFlow ``port`` send to ``ifindex``: the devmap entry, then the flag the programs check.

        The programs check ``sr_port_up`` before they count a redirect (the redirect itself comes last,
        after the counting), so the flag goes in only once the devmap can take the frame.
        """
        self.map("sr_tx_ports").update(u32(port), u32(ifindex))
        self.map("sr_port_up").update(u32(port), u32(1))

    def remove_port(self, port: int) -> None:
        """Undo ``add_port``, flag first, so no frame is counted as sent to a port that has gone."""
        self.map("sr_port_up").update(u32(port), u32(0))
        self.map("sr_tx_ports").delete(u32(port))

    def unload(self) -> None:
        # Open descriptors would keep the programs and maps alive after their pins are gone.
        for pinned in self._maps.values():
            pinned.close()
        self._maps.clear()
        for fd in self._program_fds.values():
            os.close(fd)
        self._program_fds.clear()
        shutil.rmtree(self.folder, ignore_errors=True)


def load(kind: str, name: str, root: Path = PIN_ROOT) -> LoadedObject:
    """Load object ``kind`` and pin it as ``root/name``; a previous pin of that name is replaced."""
    obj = object_path(kind)
    if not obj.exists():
        build()
    _mount_bpffs()
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    done = subprocess.run(load_command(obj, folder, kind not in TC_OBJECTS), capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise XdpError("bpf", f"loading {obj.name} failed: {done.stderr.strip()[-400:]}")
    return LoadedObject(kind, folder)
