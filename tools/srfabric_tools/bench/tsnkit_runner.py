"""Runs one tsnkit algorithm on one instance, inside tsnkit's own virtualenv (``.venv-tsnkit``).

Not part of srfabric's package imports: ``srfabric bench tsnkit`` starts it as a
script with tsnkit's interpreter, one process per run, and reads the one line it
prints last: ``RESULT <json>`` with the algorithm's verdict, its own solve time
and the wall time of the whole run. tsnkit's solve time is CPU time rounded to
the millisecond, too coarse for its fast heuristics on small instances, so the
runner also times the algorithm's ``solve`` call itself on the same clock (the
process's CPU time) to the microsecond: ``solve_cpu_s``.

Usage: python tsnkit_runner.py ALGORITHM TASK.csv TOPO.csv OUT_DIR/ TIME_LIMIT_S NAME
"""

import importlib
import json
import sys
import time


def main(argv: list[str]) -> int:
    algorithm, task, topology, out, limit, name = argv
    import tsnkit.core as utils
    import tsnkit.core._io as io_module

    # tsnkit keeps its time limit in two module globals: the algorithms read one, its decorator the other.
    utils.T_LIMIT = int(float(limit))
    io_module.T_LIMIT = int(float(limit))
    module = importlib.import_module(f"tsnkit.algorithms.{algorithm}")
    cls = getattr(module, algorithm)
    solve, spent = cls.solve, []

    def timed_solve(self, *args, **kwargs):
        began = time.process_time()
        try:
            return solve(self, *args, **kwargs)
        finally:
            spent.append(time.process_time() - began)

    cls.solve = timed_solve
    began = time.perf_counter()
    stat = module.benchmark(name, task, topology, out, workers=1)
    wall = time.perf_counter() - began
    fields = stat.to_list() if hasattr(stat, "to_list") else []
    verdict = {"algorithm": algorithm, "result": stat.result.name, "fields": [str(f) for f in fields], "wall_s": wall,
               "solve_cpu_s": sum(spent) if spent else None}
    print("RESULT " + json.dumps(verdict), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
