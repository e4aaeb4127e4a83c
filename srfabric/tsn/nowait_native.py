"""The no-wait placement loop in C (``native/nowait.c``, built by the bootstrap into
``build/native/``): the same search as :func:`srfabric.tsn.timed_heuristic.search`, with the same
answers, for the streams' candidate paths packed (:func:`pack`) when they are listed.

Without the built library :func:`available` is False and the scheduler runs its Python loop.
"""

from __future__ import annotations

import ctypes
from array import array
from pathlib import Path
from typing import NamedTuple

from srfabric.tsn.timed import TimedProblem

LIBRARY = Path(__file__).resolve().parents[2] / "build" / "native" / "libsrfabric_nowait.so"
Placement = tuple[int, int]  # (the candidate path taken, by index, or -1; the release offset)


def _load() -> ctypes.CDLL | None:
    try:
        library = ctypes.CDLL(str(LIBRARY))
    except OSError:
        return None
    function = library.srfabric_nowait
    pointer = ctypes.c_void_p
    data = ctypes.c_char_p  # a bytes object's own buffer, not copied
    function.argtypes = [ctypes.c_int32, ctypes.c_int32, data, data, data, data, ctypes.c_int64, ctypes.c_int64,
                         pointer, pointer]
    function.restype = ctypes.c_int
    return library


_LOADED = _load()  # at import: loading it takes longer than a small schedule


def _library() -> ctypes.CDLL | None:
    return _LOADED


def available() -> bool:
    """Whether the C loop is built (``make -C native``, which the bootstrap runs)."""
    return _library() is not None


def pack(problem: TimedProblem, size_bytes: int, paths: list[tuple[str, ...]]) -> bytes:
    """A stream's candidate paths as the C loop reads them: [paths, then per path: latency, hops, the links'
    indices, the hop starts, the windows], int64 each."""
    words = array("q", [len(paths)])
    for path in paths:
        starts, latency, windows = problem.timing(size_bytes, path)
        links = problem.hops(path)
        words.append(latency)
        words.append(len(links))
        words.extend(links)
        words.extend(starts)
        words.extend(windows)
    return words.tobytes()


class Packed(NamedTuple):
    """A problem's streams as the C loop reads them, in the problem's order: periods, frame sizes, where each
    stream's block starts (in words) and the blocks (:func:`pack`), int64 each."""

    periods: bytes
    sizes: bytes
    block_at: bytes
    blocks: bytes
    streams: int


def pack_problem(problem: TimedProblem, blocks: list[bytes]) -> Packed:
    """The problem's streams with their packed candidates, ``blocks`` in the problem's order."""
    starts, at = array("q"), 0
    for block in blocks:
        starts.append(at)
        at += len(block) // 8
    return Packed(array("q", [s.period_ns for s in problem.streams]).tobytes(),
                  array("q", [s.size_bytes for s in problem.streams]).tobytes(), starts.tobytes(), b"".join(blocks),
                  len(blocks))


def place(problem: TimedProblem, packed: Packed) -> list[Placement]:
    """Every stream, in the problem's order: which candidate it takes (or -1) and at what offset; the C loop
    places them in :func:`srfabric.tsn.timed_heuristic.stream_order`."""
    library = _library()
    if library is None:
        raise RuntimeError(f"{LIBRARY} is not built: run `make -C native`")
    count = packed.streams
    chosen, offsets = array("i", bytes(4 * count)), array("q", bytes(8 * count))
    status = library.srfabric_nowait(len(problem.network.edge_index), count, packed.periods, packed.sizes,
                                     packed.block_at, packed.blocks, len(packed.blocks) // 8, problem.grid_ns,
                                     chosen.buffer_info()[0], offsets.buffer_info()[0])
    if status:
        raise (MemoryError if status == -1 else ValueError)(f"the no-wait placement in C failed (status {status})")
    return list(zip(chosen, offsets, strict=True))
