"""The solver's limits, in a module of their own: the live planner names them without loading NumPy and the
solver (``mip``), which only a schedule that needs the MIP loads."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SolveOptions:
    """Solver limits: seconds of wall time, relative optimality gap, seed, threads."""

    time_limit_s: float = 60.0
    mip_gap: float = 0.0
    seed: int = 0
    threads: int = 1
