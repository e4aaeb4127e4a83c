"""Full sync: what makes srfabric hold what Neutron holds, whichever side drifted (a change lost before the
journal, a resource made or removed on srfabric by hand). Neutron is the truth. Pure.

>>> neutron = {"port_pairs": {"a": {"ingress": "p1", "egress": "p2"}}}
>>> srfabric = {"port_pairs": {"a": {"ingress": "p1", "egress": "p3"}, "b": {"ingress": "p4", "egress": "p5"}}}
>>> [(op, kind, ident) for op, kind, ident, _ in repairs(neutron, srfabric)]
[('update', 'port_pairs', 'a'), ('delete', 'port_pairs', 'b')]
"""

from __future__ import annotations

from typing import Any

# Creates and updates go parents first (a chain names its groups, a group its pairs, a pair its ports); deletes
# go the other way round.
ORDER = ("ports", "flow_classifiers", "port_pairs", "port_pair_groups", "port_chains", "service_graphs")
Inventory = dict[str, dict[str, dict[str, Any]]]  # kind -> id -> the fields both sides keep
Repair = tuple[str, str, str, dict[str, Any]]  # (create | update | delete, kind, id, Neutron's record)


def repairs(neutron: Inventory, srfabric: Inventory) -> list[Repair]:
    """The creates and updates (parents first), then the deletes (children first), that bring ``srfabric`` to
    ``neutron``; a kind neither side names is left alone."""
    unknown = sorted((set(neutron) | set(srfabric)) - set(ORDER))
    if unknown:
        raise ValueError(f"kind: {', '.join(unknown)} is not one of {', '.join(ORDER)}")
    out: list[Repair] = []
    for kind in ORDER:
        theirs, ours = neutron.get(kind, {}), srfabric.get(kind, {})
        for ident in sorted(theirs):
            if ident not in ours:
                out.append(("create", kind, ident, theirs[ident]))
            elif ours[ident] != theirs[ident]:
                out.append(("update", kind, ident, theirs[ident]))
    for kind in reversed(ORDER):
        theirs, ours = neutron.get(kind, {}), srfabric.get(kind, {})
        out += [("delete", kind, ident, {}) for ident in sorted(ours) if ident not in theirs]
    return out
