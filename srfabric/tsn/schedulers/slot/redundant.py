"""A time-triggered redundant stream (IEEE 802.1CB, two seamless trees) in the slot model.

The talker's edge replicates each frame into both trees at once, so both copies leave in the stream's slot and
phase, and each copy holds that slot on every link of its own tree. The trees share only the talker's link (it
carries one frame: the copies are made past it) and the listener's link, which carries both copies. There the
later copy may wait one frame time behind the other; when that can run past the slot's end, the next slot on the
listener's link is held too (the spill), so the late copy never meets another stream's frame.

In the admission's books the stream itself holds its first tree, and two more names hold the rest: the second
tree's own links (``SECOND``) and the spill (``SPILL``). They are placed, never requested, so a repair never moves
one part without the others.

>>> second_tree_part(("a", "s1", "s2", "s4", "b"), ("a", "s1", "s3", "s4", "b"))
('s1', 's3', 's4')
>>> second_tree_part(("a", "s1", "s2", "b"), ("a", "s1", "s2", "b"))
Traceback (most recent call last):
srfabric.errors.ModelError: second_path: is the same tree as path
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from srfabric.errors import ModelError
from srfabric.tsn.model.schedule import Assignment
from srfabric.tsn.schedulers.slot.incremental import Admission

SECOND = "#second-tree"
SPILL = "#spill"

Path = tuple[str, ...]


@dataclass(frozen=True)
class RedundantPlan:
    """Where a redundant stream sends: its first tree whole, the second tree's own links, and the spill slot on
    the listener's link (or None), all in one phase."""

    first: Assignment
    second_path: Path
    second: Assignment
    spill: Assignment | None

    @property
    def extra(self) -> list[Assignment]:
        """The parts held under names of their own (the second tree's links, the spill)."""
        return [self.second] if self.spill is None else [self.second, self.spill]


def second_tree_part(first: Path, second: Path) -> Path:
    """The part of ``second`` over links ``first`` does not carry: its switches (the trees share the talker's and
    the listener's links, and only those). Trees with other ends, or sharing a link between switches, raise,
    naming ``second_path``.

    >>> second_tree_part(("a", "s1", "s2", "s5", "b"), ("a", "s1", "s2", "s4", "s5", "b"))
    Traceback (most recent call last):
    srfabric.errors.ModelError: second_path: shares the link s1 - s2 with path
    """
    if (second[0], second[-1]) != (first[0], first[-1]) or len(second) < 4 or len(first) < 4:
        raise ModelError("second_path", "must run from path's talker through switches to its listener")
    shared = {frozenset(pair) for pair in itertools.pairwise(first[1:-1])}
    part = second[1:-1]
    if part == first[1:-1]:
        raise ModelError("second_path", "is the same tree as path")
    for pair in itertools.pairwise(part):
        if frozenset(pair) in shared:
            raise ModelError("second_path", f"shares the link {pair[0]} - {pair[1]} with path")
    return part


def plan_pair(admission: Admission, stream_id: str, multiple: int, first: Path, second: Path, spill: bool,
              at: tuple[int, int] | None = None) -> RedundantPlan | None:
    """The first free (slot, phase) of both trees, with the next slot free on the listener's link too when
    ``spill``; only ``at`` when given (a stream placed again after a restart). None when there is none."""
    part = second_tree_part(first, second)
    listener_link = admission.path_edges(first[-2:])[0]
    union = 0
    for edge in admission.path_edges(first) + admission.path_edges(part):
        union |= admission.busy[edge]
    cycles = admission.cycles
    slots = [at[0]] if at is not None else range(admission.slots - (1 if spill else 0))
    phases = [at[1]] if at is not None else range(multiple)
    for slot in slots:
        for phase in phases:
            bits = admission.pattern(multiple, phase)
            if (union >> (slot * cycles)) & bits:
                continue
            after = slot + 1  # the spill's slot on the listener's link
            if spill and (after >= admission.slots or (admission.busy[listener_link] >> (after * cycles)) & bits):
                continue
            return RedundantPlan(
                Assignment(stream_id, slot, first, phase), second,
                Assignment(stream_id + SECOND, slot, part, phase),
                Assignment(stream_id + SPILL, slot + 1, first[-2:], phase) if spill else None)
    return None
