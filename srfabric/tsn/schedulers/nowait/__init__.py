"""No-wait methods on per-link transmission times: the heuristic, its C loop, CP-SAT."""
