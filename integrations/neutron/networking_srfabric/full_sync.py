"""Full sync: what makes srfabric hold what Neutron holds, whichever side drifted (a change lost before the
journal, a resource made, changed or removed on srfabric by hand). Neutron is the truth; the hosts srfabric
learned itself (``srfabric:discovered``) are its own and left alone.

The repairs are not sent from here: they are written to the journal, as networking-odl's full sync does, so that
the worker sends them in order with every other change (no repair can overtake a change made meanwhile).

    python -m networking_srfabric.sync_command --config-file neutron.conf [--os-cloud admin] [--dry-run]

A pair renamed on srfabric is renamed back; one whose ports changed there is made again (no update changes a
pair's ports); one Neutron lacks goes:

>>> neutron = {"port_pairs": {"a": {"id": "a", "name": "fw", "ingress": "p1", "egress": "p2"},
...                           "c": {"id": "c", "name": "ids", "ingress": "p6", "egress": "p7"}}}
>>> srfabric = {"port_pairs": {"a": {"id": "a", "name": "fw", "ingress": "p1", "egress": "p3"},
...                            "b": {"id": "b", "ingress": "p4", "egress": "p5"},
...                            "c": {"id": "c", "name": "renamed", "ingress": "p6", "egress": "p7"}}}
>>> [(op, kind, ident) for op, kind, ident, _ in repairs(neutron, srfabric)]
[('delete', 'port_pairs', 'a'), ('delete', 'port_pairs', 'b'), ('update', 'port_pairs', 'c'), \
('create', 'port_pairs', 'a')]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from networking_srfabric.sender import PATHS, body

# Creates and updates go parents first (a chain names its groups, a group its pairs, a pair its ports); deletes
# go the other way round.
ORDER = ("ports", "flow_classifiers", "port_pairs", "port_pair_groups", "port_chains", "service_graphs")
KIND = {f"{kind}s": kind for kind in PATHS}  # collection -> the journal's object type
Inventory = dict[str, dict[str, dict[str, Any]]]  # collection -> id -> the fields both sides keep
Repair = tuple[str, str, str, dict[str, Any]]  # (create | update | delete, collection, id, Neutron's record)
Get = Callable[[str], dict[str, Any]]  # a collection's path -> its JSON answer


def repairs(neutron: Inventory, srfabric: Inventory) -> list[Repair]:
    """The deletes (children first), then the creates and updates (parents first), that bring ``srfabric`` to
    ``neutron``; a kind neither side names is left alone. A change of a field no update may change (a pair's
    ports) is a delete and a create."""
    unknown = sorted((set(neutron) | set(srfabric)) - set(ORDER))
    if unknown:
        raise ValueError(f"kind: {', '.join(unknown)} is not one of {', '.join(ORDER)}")
    out: list[Repair] = []
    recreate: list[tuple[str, str]] = []
    for kind in ORDER:
        theirs, ours = neutron.get(kind, {}), srfabric.get(kind, {})
        for ident in sorted(theirs):
            if ident not in ours:
                out.append(("create", kind, ident, theirs[ident]))
            elif differing := differences(theirs[ident], ours[ident]):
                if differing <= set(body(KIND[kind], "update", theirs[ident])[KIND[kind]]) | {"name", "description"}:
                    out.append(("update", kind, ident, theirs[ident]))
                else:
                    recreate.append((kind, ident))
    # Every delete first, children before parents (a stale group still holding a pair would refuse a new group
    # that takes it), then the creates and updates, parents first.
    gone = {(kind, ident) for kind in ORDER for ident in srfabric.get(kind, {}) if ident not in neutron.get(kind, {})}
    deletes: list[Repair] = [("delete", kind, ident, {}) for kind in reversed(ORDER)
               for ident in sorted(i for k, i in gone | set(recreate) if k == kind)]
    builds = [*out, *(("create", kind, ident, neutron[kind][ident]) for kind, ident in recreate)]
    return deletes + sorted(builds, key=lambda repair: ORDER.index(repair[1]))  # (stable: each kind in id order)


def differences(neutron: dict[str, Any], srfabric: dict[str, Any]) -> set[str]:
    """The fields of Neutron's record that srfabric holds otherwise (``same``).

    >>> sorted(differences({"name": "fw", "binding:profile": {"port": "3"}, "description": ""},
    ...                    {"name": "nat", "binding:profile": {"port": 3, "switch": None}}))
    ['name']
    """
    return {name for name, value in neutron.items() if not same(value, srfabric.get(name))}


def same(neutron: Any, srfabric: Any) -> bool:
    """Whether srfabric holds Neutron's value as it keeps such values: unset and empty alike, a decimal string as
    its number (``binding:profile`` values are text in the client), a dict's keys Neutron left out filled with
    srfabric's defaults."""
    if neutron in (None, "", [], {}) or srfabric in (None, "", [], {}):
        return neutron in (None, "", [], {}) and srfabric in (None, "", [], {})
    if isinstance(neutron, dict) and isinstance(srfabric, dict):
        return all(same(value, srfabric.get(key)) for key, value in neutron.items())
    if isinstance(neutron, list) and isinstance(srfabric, list):
        return len(neutron) == len(srfabric) and all(map(same, neutron, srfabric))
    if isinstance(neutron, str | int | float) and isinstance(srfabric, str | int | float):
        return str(neutron).lower() == str(srfabric).lower()
    return bool(neutron == srfabric)


def inventory(get: Get, learned_too: bool = False) -> Inventory:
    """Every collection as srfabric keeps it: each record cut to the fields a create sends (``sender.body``);
    srfabric's learned hosts left out unless ``learned_too``."""
    out: Inventory = {}
    for collection in ORDER:
        kind = KIND[collection]
        items = get(PATHS[kind]).get(collection, [])
        out[collection] = {item["id"]: body(kind, "create", item)[kind] for item in items
                           if learned_too or not item.get("srfabric:discovered")}
    return out
