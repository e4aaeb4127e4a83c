"""Stream records following the scheduler's decisions: a slot and phase, or a pinned path. Pure."""

from __future__ import annotations

from srfabric.api.storage.repository import Record, Snapshot
from srfabric.tsn.model.schedule import Assignment
from srfabric.tsn.runtime.changes import StreamChange


def fill(new: Snapshot, change: StreamChange) -> list[str]:
    """The records of ``new`` follow ``change`` (moved streams too); the moved streams' ids."""
    for ident, path in change.pinned.items():
        new["streams"][ident] = {**new["streams"][ident], "path": list(path[1:-1]), "slot": None, "phase": None}
    for ident, placed in change.placed.items():
        placed_in(new, new["streams"][ident], placed)
    for assignment in change.moved:  # made room: their records follow (new slot or path, same request)
        placed_in(new, new["streams"][assignment.stream], assignment)
    return [assignment.stream for assignment in change.moved]


def placed_in(new: Snapshot, record: Record, placed: Assignment) -> None:
    """The stream's record in ``new`` with where the scheduler put it (switches only, slot, phase)."""
    new["streams"][record["id"]] = {**record, "path": list(placed.path[1:-1]), "slot": placed.slot,
                                    "phase": placed.phase}
