"""The knobs every scheduling method reads, in a module of their own: the registry names them without loading
NumPy or a solver."""

from __future__ import annotations

from dataclasses import dataclass, field

from srfabric.errors import ModelError
from srfabric.tsn.model.solve_options import SolveOptions

SUR_FORMS = ("flow", "product")  # S/UR's two formulations: per-link flow variables, or path products


@dataclass(frozen=True)
class SchedulerOptions:
    """Knobs of the methods; the defaults are the ones the benchmark uses. A method reads the ones it knows."""

    solve: SolveOptions = field(default_factory=SolveOptions)
    path_cap: int = 32  # S/PR: at most this many shortest paths per stream
    k_paths: int = 4  # incremental, batch, nowait, cpsat: candidate paths per stream
    max_moves: int = 0  # incremental: admitted streams one admission may move (admission with repair)
    sur_form: str = "flow"
    warm_start: bool = True  # start the full ILPs from the best heuristic schedule
    slot_order: bool = True  # symmetry-breaking rows over interchangeable slots
    bound_first: bool = True  # relaxation, colouring, and the full ILP only when they leave a gap

    def check(self) -> None:
        """Refuse a knob out of range, naming it and the limit."""
        if self.sur_form not in SUR_FORMS:
            raise ModelError("sur_form", f"must be one of {', '.join(SUR_FORMS)}, got {self.sur_form!r}")
        for name in ("path_cap", "k_paths"):
            if getattr(self, name) < 1:
                raise ModelError(name, f"must be >= 1, got {getattr(self, name)}")
        if self.max_moves < 0:
            raise ModelError("max_moves", f"must be >= 0, got {self.max_moves}")
        if self.solve.time_limit_s <= 0:
            raise ModelError("time_limit_s", f"must be > 0, got {self.solve.time_limit_s}")
        if not 0 <= self.solve.mip_gap < 1:
            raise ModelError("mip_gap", f"must be in [0, 1), got {self.solve.mip_gap}")
