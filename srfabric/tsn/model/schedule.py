"""Schedules: which slot (and phase) and path every admitted stream gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.model.slots import Problem


@dataclass(frozen=True)
class Assignment:
    """Stream ``stream`` sends in ``slot`` of every cycle ``c`` with ``c % multiple == phase``."""

    stream: str
    slot: int
    path: tuple[str, ...]
    phase: int = 0


@dataclass
class Schedule:
    """The outcome of one scheduling run; ``status`` is the solver's word (``optimal``, ``time limit``...)."""

    method: str
    problem: Problem
    assignments: list[Assignment] = field(default_factory=list)
    build_s: float = 0.0
    solve_s: float = 0.0
    status: str = "optimal"
    gap: float = 0.0
    reasons: dict[str, str] = field(default_factory=dict)  # stream -> why it is unscheduled, where known

    @property
    def scheduled_ids(self) -> set[str]:
        return {a.stream for a in self.assignments}

    @property
    def unscheduled(self) -> list[str]:
        done = self.scheduled_ids
        return [s.id for s in self.problem.streams if s.id not in done]

    def sort_assignments(self) -> None:
        """Put assignments in the order of the problem's streams."""
        position = {stream.id: index for index, stream in enumerate(self.problem.streams)}
        self.assignments.sort(key=lambda a: position[a.stream])

    def offset_ns(self, assignment: Assignment) -> int:
        """When the source sends, counted from the start of a hyperperiod."""
        problem = self.problem
        return assignment.phase * problem.base_period_ns + assignment.slot * problem.slot_ns

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` form documented in docs/design/tsn.md."""
        problem = self.problem
        return {
            "method": self.method,
            "slots": problem.slots,
            "slot_ns": problem.slot_ns,
            "base_period_ns": problem.base_period_ns,
            "cycles": problem.cycles,
            "build_s": round(self.build_s, 6),
            "solve_s": round(self.solve_s, 6),
            "status": self.status,
            "gap": self.gap,
            "phases": any(m > 1 for m in problem.multiples),
            "scheduled": [
                {"id": a.stream, "slot": a.slot, "phase": a.phase, "path": list(a.path), "offset_ns": self.offset_ns(a)}
                for a in self.assignments
            ],
            "unscheduled": self.unscheduled,
            "unscheduled_reasons": {name: self.reasons[name] for name in self.unscheduled if name in self.reasons},
        }


def schedule_from_json(problem: Problem, document: Any) -> Schedule:
    """Read the ``scheduled`` list of a ``--json`` schedule back, for ``problem``; errors name the entry."""
    if not isinstance(document, dict) or not isinstance(document.get("scheduled"), list):
        raise ModelError("schedule", "must be the JSON printed by 'srfabric tsn schedule --json'")
    known = {stream.id for stream in problem.streams}
    schedule = Schedule(str(document.get("method", "file")), problem, status=str(document.get("status", "file")))
    for index, item in enumerate(document["scheduled"]):
        where = f"scheduled[{index}]"
        try:
            path = tuple(map(str, item["path"]))
            assignment = Assignment(str(item["id"]), int(item["slot"]), path, int(item.get("phase", 0)))
        except (KeyError, TypeError, ValueError):
            raise ModelError(where, "needs id, slot and path") from None
        if assignment.stream not in known:
            raise ModelError(f"{where}.id", f"{assignment.stream!r} is not in the flow file")
        schedule.assignments.append(assignment)
    return schedule
