"""A sparse 0/1 program built as arrays and solved by HiGHS.

Model building dominated the paper's runtimes (PuLP objects, one per term), so
the formulations here append whole NumPy blocks of coefficients and hand HiGHS
one compressed-column matrix.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from srfabric.tsn.model.solve_options import SolveOptions  # noqa: F401  (named here too, where the solver is)

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class MipResult:
    """Values of the columns (None if no feasible point was found) and how the solve ended."""

    values: FloatArray | None
    status: str
    gap: float
    solve_s: float
    dual_bound: float = float("inf")  # proven upper bound on the objective (maximisation)


class BinaryProgram:
    """Maximise ``cost @ x`` over binary ``x`` subject to rows ``lower <= A x <= upper``."""

    def __init__(self) -> None:
        self.costs: list[FloatArray] = []
        self.num_cols = 0
        self._rows: list[IntArray] = []
        self._cols: list[IntArray] = []
        self._vals: list[FloatArray] = []
        self.lower: list[float] = []
        self.upper: list[float] = []

    def add_columns(self, cost: FloatArray | Sequence[float]) -> IntArray:
        """Append binary columns with the given costs; returns their indices."""
        array = np.asarray(cost, dtype=np.float64)
        first = self.num_cols
        self.costs.append(array)
        self.num_cols += len(array)
        return np.arange(first, self.num_cols, dtype=np.int64)

    def add_rows(self, count: int, lower: float, upper: float) -> int:
        """Append ``count`` rows with equal bounds; returns the index of the first."""
        first = len(self.lower)
        self.lower += [lower] * count
        self.upper += [upper] * count
        return first

    def add_entries(self, rows: IntArray, cols: IntArray, vals: FloatArray | float = 1.0) -> None:
        """Add coefficients at ``(rows[i], cols[i])``; duplicates are summed."""
        rows = np.asarray(rows, dtype=np.int64)
        self._rows.append(rows)
        self._cols.append(np.asarray(cols, dtype=np.int64))
        self._vals.append(np.broadcast_to(np.asarray(vals, dtype=np.float64), rows.shape).copy())

    def add_packing_rows(self, rows: IntArray, cols: IntArray, capacity: float = 1.0) -> None:
        """Add ``sum x <= capacity`` over groups (rows[i] labels the group of cols[i]).

        Groups too small to ever exceed the capacity are left out.
        """
        if len(rows) == 0:
            return
        labels, inverse, counts = np.unique(rows, return_inverse=True, return_counts=True)
        keep = counts[inverse] > capacity
        kept_labels = np.unique(inverse[keep])
        new_index = np.full(len(labels), -1, dtype=np.int64)
        first = self.add_rows(len(kept_labels), -np.inf, capacity)
        new_index[kept_labels] = np.arange(first, first + len(kept_labels))
        self.add_entries(new_index[inverse[keep]], np.asarray(cols)[keep])

    def solve(self, options: SolveOptions, start: FloatArray | None = None) -> MipResult:
        """Solve with HiGHS; ``start`` is a feasible point to begin from."""
        import highspy  # Imported here: HiGHS loads only when a schedule is computed.

        cost = np.concatenate(self.costs) if self.costs else np.zeros(0)
        rows = np.concatenate(self._rows) if self._rows else np.zeros(0, dtype=np.int64)
        cols = np.concatenate(self._cols) if self._cols else np.zeros(0, dtype=np.int64)
        vals = np.concatenate(self._vals) if self._vals else np.zeros(0)
        order = np.lexsort((rows, cols))
        rows, cols, vals = rows[order], cols[order], vals[order]
        starts = np.zeros(self.num_cols + 1, dtype=np.int32)
        np.cumsum(np.bincount(cols, minlength=self.num_cols), out=starts[1:])

        lp = highspy.HighsLp()
        lp.num_col_ = self.num_cols
        lp.num_row_ = len(self.lower)
        lp.col_cost_ = cost
        lp.col_lower_ = np.zeros(self.num_cols)
        lp.col_upper_ = np.ones(self.num_cols)
        lp.row_lower_ = np.asarray(self.lower, dtype=np.float64)
        lp.row_upper_ = np.asarray(self.upper, dtype=np.float64)
        lp.sense_ = highspy.ObjSense.kMaximize
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = starts
        lp.a_matrix_.index_ = rows.astype(np.int32)
        lp.a_matrix_.value_ = vals
        lp.integrality_ = [highspy.HighsVarType.kInteger] * self.num_cols

        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        highs.setOptionValue("time_limit", float(options.time_limit_s))
        highs.setOptionValue("mip_rel_gap", float(options.mip_gap))
        highs.setOptionValue("random_seed", int(options.seed))
        highs.setOptionValue("threads", int(options.threads))
        began = time.perf_counter()
        highs.passModel(lp)
        if start is not None:
            solution = highspy.HighsSolution()
            solution.col_value = list(map(float, start))
            solution.value_valid = True
            highs.setSolution(solution)
        highs.run()
        solve_s = time.perf_counter() - began
        status = highs.getModelStatus()
        info = highs.getInfo()
        names = {
            highspy.HighsModelStatus.kOptimal: "optimal",
            highspy.HighsModelStatus.kTimeLimit: "time limit",
            highspy.HighsModelStatus.kInfeasible: "infeasible",
        }
        values = None
        if info.primal_solution_status == highspy.kSolutionStatusFeasible:
            values = np.asarray(highs.getSolution().col_value, dtype=np.float64)
        # With no incumbent, or an incumbent of 0, HiGHS reports an infinite gap: keep it infinite.
        gap = float(info.mip_gap) if values is not None else float("inf")
        dual = float(info.mip_dual_bound) if np.isfinite(info.mip_dual_bound) else float("inf")
        if status == highspy.HighsModelStatus.kOptimal and values is not None and options.mip_gap == 0:
            dual = min(dual, float(cost @ values) + 1e-6)
        return MipResult(values, names.get(status, highs.modelStatusToString(status)), gap, solve_s, dual)
