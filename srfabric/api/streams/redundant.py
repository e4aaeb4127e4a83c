"""Where a redundant stream (IEEE 802.1CB, ``num_seamless_trees: 2``) runs: its two paths, named in the request
or chosen to share no link (``routing.disjoint``), and no switch where the topology allows. A time-triggered one
(priority 7) also gets one slot and phase on both trees from the live planner (``tsn.redundant``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from srfabric.api.errors import ApiError, bad_request, in_use
from srfabric.api.storage.repository import Record
from srfabric.errors import ModelError, RoutingError
from srfabric.model.fabric import Fabric
from srfabric.routing.disjoint import disjoint_pair
from srfabric.rules.streams.steering import check_path_ends, switch_path
from srfabric.tsn.model.network import Stream
from srfabric.tsn.runtime.live import LivePlanner, Refused

TT_PRIORITY = 7


def redundant_record(fabric: Fabric, record: Record, talker: str, listener: str) -> Record:
    """``record`` with its ``path`` and ``second_path`` set; ``ApiError`` naming the field when they cannot be."""
    ends = fabric.hosts[talker], fabric.hosts[listener]
    names = {dpid: switch.name for dpid, switch in fabric.switches.items()}
    try:
        if record["path"] and record["second_path"]:
            paths = (tuple(record["path"]), tuple(record["second_path"]))
            for field, path in zip(("path", "second_path"), paths, strict=True):
                try:
                    switch_path(fabric, path)
                    check_path_ends(fabric, path, *ends)
                except RoutingError as error:  # a path named wrong: the request's fault
                    raise bad_request(f"{field}: {error}") from None
            shared = shared_links(*paths)
            if shared:
                raise bad_request(f"second_path: shares the link {shared[0][0]} - {shared[0][1]} with path; a "
                                  "redundant stream's paths share no link.")
        elif record["path"] or record["second_path"]:
            raise bad_request("second_path: name both paths of a redundant stream, or neither (srfabric then "
                              "chooses two that share no link).")
        else:
            paths = disjoint_pair(fabric, names[ends[0].dpid], names[ends[1].dpid]).paths
    except RoutingError as error:
        raise in_use("StreamNotAdmitted", f"num_seamless_trees: {error}") from None
    except ApiError:
        raise
    return {**record, "path": list(paths[0]), "second_path": list(paths[1]), "slot": None, "phase": None}


def shared_links(first: tuple[str, ...], second: tuple[str, ...]) -> list[tuple[str, str]]:
    """The links (either way) two paths both cross.

    >>> shared_links(("s1", "s2", "s5"), ("s1", "s3", "s4", "s5"))
    []
    >>> shared_links(("s1", "s2", "s5"), ("s1", "s2", "s4", "s5"))
    [('s1', 's2')]
    """
    theirs = {frozenset(pair) for pair in itertools.pairwise(second)}
    return [pair for pair in itertools.pairwise(first) if frozenset(pair) in theirs]


def replan_redundant(planner: LivePlanner, fabric: Fabric, record: Record, old: Record | None,
                     ends: tuple[str, str], stream: Callable[[], Stream]) -> tuple[Record, Callable[[], None]]:
    """A created or changed redundant stream's record (paths, and a slot and phase when time-triggered) and how
    to undo what the planner was told; ``ends``: its talker's and listener's hosts."""
    if old is not None and record["path"] == old["path"]:
        return record, lambda: None
    placed = redundant_record(fabric, record, *ends)
    ident = placed["id"]
    put_back = planner.keep(ident) if ident in planner.streams else lambda: None
    if ident in planner.streams:
        planner.remove(ident)
    if placed["priority"] != TT_PRIORITY:
        return placed, put_back
    trees = [(ends[0], *placed[field], ends[1]) for field in ("path", "second_path")]
    try:
        where = planner.admit_redundant(stream(), trees[0], trees[1])
    except Refused as error:
        put_back()
        raise in_use("StreamNotAdmitted", str(error)) from None
    except ModelError as error:
        put_back()
        raise bad_request(str(error), "StreamBadRequest") from None

    def undo() -> None:
        planner.remove(ident)
        put_back()

    return {**placed, "slot": where.slot, "phase": where.phase}, undo


def trees(records: list[Record]) -> list[list[str]]:
    """Every path the records' streams cross: a redundant stream's second too."""
    return [path for record in records for path in (record["path"], record.get("second_path") or []) if path]


class Undos(list[Callable[[], None]]):
    """Undo steps, run last first when called."""

    def __call__(self) -> None:
        for undo in reversed(self):
            undo()
