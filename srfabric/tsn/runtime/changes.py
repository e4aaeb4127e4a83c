"""A stream change decided on the live planner (``live.LivePlanner``): the API hands in what is asked (streams
with their ends resolved to hosts), and gets back where each changed or moved stream now sits, and how to undo
it; or ``Refused`` saying why not. The planner is the only state it changes. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from srfabric.errors import ModelError
from srfabric.tsn.model.network import Stream
from srfabric.tsn.model.schedule import Assignment
from srfabric.tsn.runtime.live import LivePlanner

Path = tuple[str, ...]  # talker, switches, listener


@dataclass(frozen=True)
class StreamAsk:
    """One stream as asked, looked up only as far as a change needs it: ``stream()`` (its ends resolved to hosts),
    ``full_path()`` (talker, the switches named, listener), whether it names switches, and whether it is
    time-triggered (a slot on every hop; else only pinned to a path). Each look-up may raise, naming the field."""

    stream: Callable[[], Stream]
    full_path: Callable[[], Path]
    named: bool
    timed: bool


@dataclass
class StreamChange:
    """Where the change put its streams (``placed``: a slot; ``pinned``: a best-effort stream's path), the admitted
    streams it moved to make room, the batch members it refused (with why), and how to undo it."""

    placed: dict[str, Assignment] = field(default_factory=dict)
    pinned: dict[str, Path] = field(default_factory=dict)
    moved: list[Assignment] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    undo: Callable[[], None] = lambda: None


def change_one(planner: LivePlanner, ident: str, asked: StreamAsk | None, new: bool, path_changed: bool,
               max_moves: int) -> StreamChange:
    """Stream ``ident`` deleted (``asked`` None), created (``new``), put on another path, or left as it is."""
    if asked is None:
        if not new and ident in planner.streams:
            put_back = planner.keep(ident)
            planner.remove(ident)
            return StreamChange(undo=put_back)
        return StreamChange()
    if not asked.timed:
        return StreamChange(pinned={ident: asked.full_path() if asked.named else shortest(planner, asked.stream())})
    if new:
        stream = asked.stream()
        paths = [asked.full_path()] if asked.named else None
        # Where every stream was, for the undo: copies of the two maps (their values are replaced, never changed).
        streams, admitted = dict(planner.streams), dict(planner.admission.admitted)
        placed, moved = planner.admit_with_repair(stream, paths, max_moves)

        def unadmit() -> None:
            planner.remove(ident)
            for assignment in moved:
                planner.remove(assignment.stream)
                planner.place(streams[assignment.stream][0], admitted[assignment.stream][0])

        return StreamChange(placed={ident: placed}, moved=moved, undo=unadmit)
    if not path_changed:
        return StreamChange()
    if ident not in planner.admission.admitted:  # it lost its slot (its old path broke): admitted afresh
        stream = asked.stream()
        return StreamChange(placed={ident: planner.admit(stream, [asked.full_path()])},
                            undo=lambda: planner.remove(ident))
    before, moving = planner.admission.admitted[ident][0], planner.streams[ident][0]

    def back() -> None:
        planner.remove(ident)
        planner.place(moving, before)

    return StreamChange(placed={ident: planner.move(ident, asked.full_path())}, undo=back)


def change_batch(planner: LivePlanner, asks: list[StreamAsk], max_moves: int) -> StreamChange:
    """New time-triggered streams admitted together (``LivePlanner.admit_batch``): as many as there is room for,
    the others in ``refused``."""
    requests = []
    for asked in asks:
        paths = [asked.full_path()] if asked.named else None
        requests.append((asked.stream(), paths))
    result, refused, undo = planner.admit_batch(requests, max_moves)
    return StreamChange(placed=dict(result.placed), moved=list(result.moved), refused=refused, undo=undo)


def shortest(planner: LivePlanner, stream: Stream) -> Path:
    """The stream's shortest path on the planner's network."""
    found = planner.admission.finder.k_shortest(stream.src, stream.dst, 1)
    if not found:
        raise ModelError("path", f"no path from {stream.src} to {stream.dst}")
    return found[0]
