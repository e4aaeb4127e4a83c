"""Where a redundant stream (IEEE 802.1CB, ``num_seamless_trees: 2``) runs: its two paths, named in the request
or chosen to share no link (``routing.disjoint``), and no switch where the topology allows. Best-effort classes
only for now: a time-triggered stream would need a slot on each tree, which the scheduler does not give yet."""

from __future__ import annotations

import itertools

from srfabric.api.errors import ApiError, bad_request, in_use
from srfabric.api.repository import Record
from srfabric.errors import RoutingError
from srfabric.model.fabric import Fabric
from srfabric.routing.disjoint import disjoint_pair
from srfabric.rules.streams import check_path_ends, switch_path

TT_PRIORITY = 7


def redundant_record(fabric: Fabric, record: Record, talker: str, listener: str) -> Record:
    """``record`` with its ``path`` and ``second_path`` set; ``ApiError`` naming the field when they cannot be."""
    if record["priority"] == TT_PRIORITY:
        raise in_use("StreamNotAdmitted", "num_seamless_trees: 2 is taken for best-effort classes (priority 0..6) "
                                          "only: a time-triggered stream would need a slot on each tree, which "
                                          "the scheduler does not give yet")
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
