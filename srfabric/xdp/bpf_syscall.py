"""The few bpf(2) commands srfabric needs, called through ctypes: no compiled extension.

Maps and programs are pinned under bpffs by the loader (bpftool); this module
opens them by path and reads, writes and test-runs them. Every failure is a
``BpfError`` naming the command and the kernel's reason.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from srfabric.errors import SrfabricError

SYS_BPF = 321  # x86_64
BPF_MAP_LOOKUP_ELEM = 1
BPF_MAP_UPDATE_ELEM = 2
BPF_MAP_DELETE_ELEM = 3
BPF_MAP_GET_NEXT_KEY = 4
BPF_PROG_TEST_RUN = 10
BPF_OBJ_GET = 7
BPF_OBJ_GET_INFO_BY_FD = 15
BPF_ANY = 0


class BpfError(SrfabricError):
    """A bpf(2) command failed."""


class _MapElem(ctypes.Structure):
    _fields_ = [
        ("map_fd", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
        ("key", ctypes.c_uint64),
        ("value", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
    ]


class _ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32), ("file_flags", ctypes.c_uint32)]


class _TestRun(ctypes.Structure):
    _fields_ = [
        ("prog_fd", ctypes.c_uint32),
        ("retval", ctypes.c_uint32),
        ("data_size_in", ctypes.c_uint32),
        ("data_size_out", ctypes.c_uint32),
        ("data_in", ctypes.c_uint64),
        ("data_out", ctypes.c_uint64),
        ("repeat", ctypes.c_uint32),
        ("duration", ctypes.c_uint32),
        ("ctx_size_in", ctypes.c_uint32),
        ("ctx_size_out", ctypes.c_uint32),
        ("ctx_in", ctypes.c_uint64),
        ("ctx_out", ctypes.c_uint64),
        ("flags", ctypes.c_uint32),
        ("cpu", ctypes.c_uint32),
        ("batch_size", ctypes.c_uint32),
    ]


class _InfoByFd(ctypes.Structure):
    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32), ("info", ctypes.c_uint64)]


class _MapInfo(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_uint32),
        ("id", ctypes.c_uint32),
        ("key_size", ctypes.c_uint32),
        ("value_size", ctypes.c_uint32),
        ("max_entries", ctypes.c_uint32),
        ("map_flags", ctypes.c_uint32),
        ("name", ctypes.c_char * 16),
    ]


# Map types whose lookups return one value per possible CPU.
PERCPU_TYPES = {5, 6, 10}  # PERCPU_HASH, PERCPU_ARRAY, LRU_PERCPU_HASH


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _bpf(cmd: int, attr: ctypes.Structure, what: str) -> int:
    result = _libc().syscall(SYS_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if result < 0:
        errno = ctypes.get_errno()
        raise BpfError(what, f"bpf() failed: {os.strerror(errno)} (errno {errno})")
    return int(result)


@cache
def possible_cpus() -> int:
    """How many CPUs per-CPU maps hold a slot for (``/sys/devices/system/cpu/possible``)."""
    text = Path("/sys/devices/system/cpu/possible").read_text().strip()
    count = 0
    for part in text.split(","):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


@dataclass
class PinnedMap:
    """A map opened from its bpffs pin; ``close()`` releases the descriptor."""

    path: str
    fd: int
    map_type: int
    key_size: int
    value_size: int
    max_entries: int

    @classmethod
    def open(cls, path: str | Path) -> PinnedMap:
        fd = obj_get(path)
        info = _MapInfo()
        attr = _InfoByFd(fd, ctypes.sizeof(info), ctypes.addressof(info))
        try:
            _bpf(BPF_OBJ_GET_INFO_BY_FD, attr, f"map {path}")
        except BpfError:
            os.close(fd)
            raise
        return cls(str(path), fd, info.type, info.key_size, info.value_size, info.max_entries)

    @property
    def per_cpu(self) -> bool:
        return self.map_type in PERCPU_TYPES

    @property
    def _stride(self) -> int:
        """Bytes per CPU in a per-CPU lookup: the value rounded up to 8."""
        return (self.value_size + 7) // 8 * 8

    def _value_buffer(self) -> ctypes.Array[ctypes.c_char]:
        return ctypes.create_string_buffer(self._stride * possible_cpus() if self.per_cpu else self.value_size)

    def _key(self, key: bytes) -> ctypes.Array[ctypes.c_char]:
        if len(key) != self.key_size:
            raise BpfError("key", f"{len(key)} bytes for {self.path}, whose keys are {self.key_size} bytes")
        return ctypes.create_string_buffer(key, len(key))

    def update(self, key: bytes, value: bytes) -> None:
        if len(value) != self.value_size:
            raise BpfError("value", f"{len(value)} bytes for {self.path}, whose values are {self.value_size} bytes")
        k, v = self._key(key), ctypes.create_string_buffer(value, len(value))
        _bpf(BPF_MAP_UPDATE_ELEM, _MapElem(self.fd, 0, ctypes.addressof(k), ctypes.addressof(v), BPF_ANY),
             f"update {self.path}")

    def lookup(self, key: bytes) -> bytes | None:
        """The value (for per-CPU maps, every CPU's value, each padded to 8 bytes), or None."""
        k, v = self._key(key), self._value_buffer()
        try:
            _bpf(BPF_MAP_LOOKUP_ELEM, _MapElem(self.fd, 0, ctypes.addressof(k), ctypes.addressof(v), 0),
                 f"lookup {self.path}")
        except BpfError:
            return None
        return v.raw

    def lookup_per_cpu(self, key: bytes) -> list[bytes]:
        raw = self.lookup(key)
        if raw is None:
            return []
        return [raw[i * self._stride:i * self._stride + self.value_size] for i in range(possible_cpus())]

    def delete(self, key: bytes) -> bool:
        k = self._key(key)
        try:
            _bpf(BPF_MAP_DELETE_ELEM, _MapElem(self.fd, 0, ctypes.addressof(k), 0, 0), f"delete {self.path}")
        except BpfError:
            return False
        return True

    def all_keys(self) -> list[bytes]:
        found: list[bytes] = []
        previous: ctypes.Array[ctypes.c_char] | None = None
        while True:
            following = ctypes.create_string_buffer(self.key_size)
            key_address = ctypes.addressof(previous) if previous is not None else 0
            attr = _MapElem(self.fd, 0, key_address, ctypes.addressof(following), 0)
            try:
                _bpf(BPF_MAP_GET_NEXT_KEY, attr, f"keys of {self.path}")
            except BpfError:
                return found
            found.append(following.raw)
            previous = following

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def obj_get(path: str | Path) -> int:
    """A file descriptor for the map or program pinned at ``path``."""
    name = ctypes.create_string_buffer(str(path).encode())
    return _bpf(BPF_OBJ_GET, _ObjGet(ctypes.addressof(name), 0, 0), f"open {path}")


@dataclass(frozen=True)
class TestRun:
    """What BPF_PROG_TEST_RUN reported: the program's return value, the frame it left, ns per run."""

    retval: int
    data: bytes
    duration_ns: int


BPF_F_TEST_XDP_LIVE_FRAMES = 2


def prog_test_run(
    prog_fd: int, frame: bytes, repeat: int = 1, ingress_ifindex: int = 0, live: bool = False
) -> TestRun:
    """Run an XDP program on ``frame`` ``repeat`` times in the kernel.

    ``ingress_ifindex`` fills ``xdp_md.ingress_ifindex`` so the program sees an arrival port.
    Without ``live`` nothing is sent and the frame the program left is returned; the runs
    share one buffer, so a program that edits the frame sees its own edits on the next run.
    With ``live`` the frames come from a page pool and redirects really transmit (no frame
    comes back); the kernel resets each frame's pointers between runs but not its bytes, so
    a program that rewrites a header must be handed a fresh one (``bpf/generator.c`` stamps it).
    """
    data_in = ctypes.create_string_buffer(frame, len(frame))
    out_size = 0 if live else len(frame) + 256  # room for pushed headers
    data_out = ctypes.create_string_buffer(max(out_size, 1))
    xdp_md = (ctypes.c_uint32 * 6)(0, len(frame), 0, ingress_ifindex, 0, 0)
    attr = _TestRun(
        prog_fd=prog_fd, data_size_in=len(frame), data_size_out=out_size,
        data_in=ctypes.addressof(data_in), data_out=ctypes.addressof(data_out) if out_size else 0, repeat=repeat,
        flags=BPF_F_TEST_XDP_LIVE_FRAMES if live else 0,
    )
    if ingress_ifindex:
        attr.ctx_size_in = ctypes.sizeof(xdp_md)
        attr.ctx_in = ctypes.addressof(xdp_md)
    _bpf(BPF_PROG_TEST_RUN, attr, "test run")
    return TestRun(attr.retval, data_out.raw[:attr.data_size_out], attr.duration)
