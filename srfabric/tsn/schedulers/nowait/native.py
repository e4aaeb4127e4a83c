"""The no-wait placement loop in C (``native/nowait.c``, a Python module the bootstrap builds into
``build/native/_nowait.so``): the same search as :func:`srfabric.tsn.schedulers.nowait.heuristic.search`, with the same
answers, over the problem packed (:func:`pack`, :func:`pack_problem`) when its paths are listed.

Without the built module :func:`available` is False and the scheduler runs its Python loop.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from array import array
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from srfabric.tsn.model.timed import TimedProblem

MODULE = Path(__file__).resolve().parents[4] / "build" / "native" / "_nowait.so"
Placement = tuple[int, int]  # (the candidate path taken, by index, or -1; the release offset)


def _load() -> ModuleType | None:
    if not MODULE.is_file():
        return None
    loader = importlib.machinery.ExtensionFileLoader("_nowait", str(MODULE))
    spec = importlib.util.spec_from_file_location("_nowait", MODULE, loader=loader)
    if spec is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError:  # built for another Python
        return None
    return module


_LOADED = _load()  # at import: loading it takes longer than a small schedule


def available() -> bool:
    """Whether the C loop is built (``make -C native``, which the bootstrap runs)."""
    return _LOADED is not None


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


def pack_problem(problem: TimedProblem, blocks: list[bytes]) -> Packed:
    """The problem's streams with their packed candidates, ``blocks`` in the problem's order."""
    starts, at = array("q"), 0
    for block in blocks:
        starts.append(at)
        at += len(block) // 8
    return Packed(array("q", [s.period_ns for s in problem.streams]).tobytes(),
                  array("q", [s.size_bytes for s in problem.streams]).tobytes(), starts.tobytes(), b"".join(blocks))


def place(problem: TimedProblem, packed: Packed) -> list[Placement]:
    """Every stream, in the problem's order: which candidate it takes (or -1) and at what offset; the C loop
    places them in :func:`srfabric.tsn.schedulers.nowait.heuristic.stream_order`. ValueError for a malformed input."""
    if _LOADED is None:
        raise RuntimeError(f"{MODULE} is not built: run `make -C native`")
    placed: list[Placement] = _LOADED.place(len(problem.network.edge_index), problem.grid_ns, *packed)
    return placed
