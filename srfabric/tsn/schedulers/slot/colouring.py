"""Slots for streams whose paths are already chosen: graph colouring with ``slots`` colours.

Two options conflict when they share a directed edge in some cycle; a slot
assignment is then a proper colouring of that conflict graph. DSatur colours
most graphs met here in a millisecond or two; when it cannot place every option,
randomised restarts and a tabu search repair it, and if they fail too, a small
feasibility ILP over just these options decides.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from srfabric.tsn.model.paths import Path
from srfabric.tsn.model.schedule import Assignment
from srfabric.tsn.model.slots import Problem
from srfabric.tsn.schedulers.slot.mip import BinaryProgram, SolveOptions

Choice = tuple[int, Path, int]  # (stream index, path, phase)
RESTARTS = 8  # randomised DSatur runs before the exact colouring ILP


def conflict_graph(problem: Problem, chosen: Sequence[Choice]) -> tuple[list[set[int]], list[list[int]]]:
    """Neighbours of each chosen option, and the cliques: options sharing one (edge, cycle)."""
    users: dict[tuple[int, int], list[int]] = {}
    for position, (stream, path, phase) in enumerate(chosen):
        for edge in problem.network.path_edges(path):
            for cycle in problem.cycles_used(stream, phase):
                users.setdefault((edge, cycle), []).append(position)
    neighbours: list[set[int]] = [set() for _ in chosen]
    for sharing in users.values():
        for position in sharing:
            neighbours[position].update(sharing)
    for position, near in enumerate(neighbours):
        near.discard(position)
    return neighbours, [sharing for sharing in users.values() if len(sharing) > 1]


def dsatur(neighbours: list[set[int]], colours: int, rng: random.Random | None = None) -> list[int]:
    """Colour of each vertex (-1 when none was free), by Brélaz's saturation order.

    With ``rng``, ties in saturation and degree and the choice among free
    colours are broken at random, for restarts.
    """
    colour = [-1] * len(neighbours)
    seen: list[set[int]] = [set() for _ in neighbours]
    pending = set(range(len(neighbours)))
    noise = [rng.random() for _ in neighbours] if rng else [-v for v in range(len(neighbours))]
    while pending:
        vertex = max(pending, key=lambda v: (len(seen[v]), len(neighbours[v]), noise[v]))
        pending.discard(vertex)
        free = [c for c in range(colours) if c not in seen[vertex]]
        if not free:
            continue
        chosen = rng.choice(free) if rng else free[0]
        colour[vertex] = chosen
        for near in neighbours[vertex]:
            seen[near].add(chosen)
    return colour


def tabu_repair(
    neighbours: list[set[int]], colours: int, start: list[int], rng: random.Random, max_moves: int = 2000
) -> list[int] | None:
    """Turn a partial colouring into a proper one by tabu search over conflicting vertices (TabuCol).

    Uncoloured vertices take their least conflicting colour; then a vertex in
    conflict moves to the colour that removes the most conflicts, and may not
    move back for a while. Returns None if no proper colouring appears in time.
    """
    colour = list(start)
    count = len(neighbours)
    gamma = [[0] * colours for _ in range(count)]  # gamma[v][c]: neighbours of v coloured c
    for vertex in range(count):
        if colour[vertex] >= 0:
            for near in neighbours[vertex]:
                gamma[near][colour[vertex]] += 1

    def recolour(vertex: int, new: int) -> None:
        old = colour[vertex]
        colour[vertex] = new
        for near in neighbours[vertex]:
            if old >= 0:
                gamma[near][old] -= 1
            gamma[near][new] += 1

    for vertex in range(count):
        if colour[vertex] < 0:
            recolour(vertex, min(range(colours), key=lambda c: (gamma[vertex][c], rng.random())))
    tabu: dict[tuple[int, int], int] = {}
    for move in range(max_moves):
        clashing = [v for v in range(count) if gamma[v][colour[v]] > 0]
        if not clashing:
            return colour
        best: tuple[int, float, int, int] | None = None
        for vertex in clashing:
            here = gamma[vertex][colour[vertex]]
            for option in range(colours):
                if option == colour[vertex]:
                    continue
                delta = gamma[vertex][option] - here
                if tabu.get((vertex, option), -1) >= move and len(clashing) + delta > 0:
                    continue  # Tabu, and not good enough to end the search.
                key = (delta, rng.random(), vertex, option)
                if best is None or key < best:
                    best = key
        if best is None:
            continue
        _, _, vertex, option = best
        tabu[vertex, colour[vertex]] = move + len(clashing) + rng.randrange(10)
        recolour(vertex, option)
    return None


def colour_by_ilp(cliques: list[list[int]], count: int, colours: int, solve: SolveOptions) -> list[int] | None:
    """An exact colouring of all ``count`` vertices, or None when the ILP finds none in time."""
    program = BinaryProgram()
    cols = program.add_columns(np.zeros(count * colours)).reshape(count, colours)
    first = program.add_rows(count, 1.0, 1.0)
    program.add_entries(np.repeat(np.arange(first, first + count), colours), cols.ravel())
    if cliques:
        members = np.concatenate([np.asarray(c, dtype=np.int64) for c in cliques])
        labels = np.repeat(np.arange(len(cliques), dtype=np.int64), [len(c) for c in cliques])
        k = np.arange(colours, dtype=np.int64)
        program.add_packing_rows((labels[:, None] * colours + k[None, :]).ravel(), cols[members].ravel())
    result = program.solve(solve)
    if result.values is None:
        return None
    return [int(c) for c in np.argmax(result.values[cols], axis=1)]


def colour(problem: Problem, chosen: Sequence[Choice], solve: SolveOptions) -> list[Assignment]:
    """Slots for as many chosen options as can be placed (all of them when a colouring exists)."""
    neighbours, cliques = conflict_graph(problem, chosen)
    slots = dsatur(neighbours, problem.slots)
    rng = random.Random(solve.seed)
    for _ in range(RESTARTS):
        if -1 not in slots:
            break
        again = dsatur(neighbours, problem.slots, rng)
        if again.count(-1) < slots.count(-1):
            slots = again
    if -1 in slots:
        repaired = tabu_repair(neighbours, problem.slots, slots, rng)
        if repaired is not None:
            slots = repaired
    if -1 in slots:
        exact = colour_by_ilp(cliques, len(chosen), problem.slots, solve)
        if exact is not None:
            slots = exact
    return [
        Assignment(problem.streams[stream].id, slot, path, phase)
        for (stream, path, phase), slot in zip(chosen, slots, strict=True)
        if slot >= 0
    ]
