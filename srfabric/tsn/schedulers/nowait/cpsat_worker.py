"""The no-wait model on OR-Tools CP-SAT, run as a process of its own:
``python -m srfabric.tsn.schedulers.nowait.cpsat_worker``
reads an instance (JSON, see :mod:`srfabric.tsn.schedulers.nowait.cpsat`) on standard input and writes the solution on
standard output.

It is a separate process because OR-Tools and HiGHS (the slot methods' solver)
crash when both are loaded in one; this module imports nothing of srfabric.

The model: every stream may take one of its candidate paths (a literal per
path, at most one true) and has one release offset in time units; each frame
of each hop over the hyperperiod is an optional interval of the hop's window,
present when its path is taken, starting at ``offset + delta + k * period``; the
intervals of one directed link do not overlap; a taken path bounds the offset
so the frame arrives within its period. The objective counts the streams
placed. The caller's heuristic solution is given as a hint, so the search
starts from it.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: loading this module (doctest collection, say) must not load OR-Tools
    from ortools.sat.python import cp_model


def build(instance: dict[str, Any]) -> tuple[cp_model.CpModel, list[cp_model.IntVar], list[list[cp_model.IntVar]]]:
    """The model, each stream's offset variable and each stream's path literals."""
    from ortools.sat.python import cp_model
    model = cp_model.CpModel()
    hyperperiod = int(instance["hyperperiod"])
    on_link: dict[int, list[cp_model.IntervalVar]] = {}
    offsets, chosen = [], []
    for s, stream in enumerate(instance["streams"]):
        period = int(stream["period"])
        offset = model.new_int_var(0, max(path["latest"] for path in stream["paths"]), f"offset{s}")
        literals = []
        for p, path in enumerate(stream["paths"]):
            taken = model.new_bool_var(f"take{s}_{p}")
            model.add(offset <= path["latest"]).only_enforce_if(taken)
            for link, delta, window in path["hops"]:
                for frame in range(hyperperiod // period):
                    on_link.setdefault(link, []).append(model.new_optional_fixed_size_interval_var(
                        offset + delta + frame * period, window, taken, f"s{s}p{p}l{link}f{frame}"))
            literals.append(taken)
        model.add_at_most_one(literals)
        offsets.append(offset)
        chosen.append(literals)
    for intervals in on_link.values():
        if len(intervals) > 1:
            model.add_no_overlap(intervals)
    model.maximize(sum(literal for literals in chosen for literal in literals))
    return model, offsets, chosen


def solve(instance: dict[str, Any]) -> dict[str, Any]:
    """Solve within the instance's time limit; each stream's (path index, offset) or None."""
    from ortools.sat.python import cp_model

    began = time.perf_counter()
    model, offsets, chosen = build(instance)
    for offset, literals, hint in zip(offsets, chosen, instance.get("hint", []), strict=False):
        if hint is not None:
            model.add_hint(offset, hint[1])
            for p, literal in enumerate(literals):
                model.add_hint(literal, p == hint[0])
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(instance["time_limit_s"])
    solver.parameters.num_workers = int(instance.get("threads", 1))
    solver.parameters.random_seed = int(instance.get("seed", 0))
    status = solver.solve(model)
    choice: list[list[int] | None] = []
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        for offset, literals in zip(offsets, chosen, strict=True):
            taken = [p for p, literal in enumerate(literals) if solver.boolean_value(literal)]
            choice.append([taken[0], solver.value(offset)] if taken else None)
    return {"status": solver.status_name(status).lower(), "choice": choice, "bound": solver.best_objective_bound,
            "solve_s": time.perf_counter() - began}


def main() -> int:
    print(json.dumps(solve(json.load(sys.stdin))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
