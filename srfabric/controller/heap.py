"""Keep Python's cyclic garbage collector from stalling the controller.

A full (generation 2) collection walks every object the process holds. In a
controller that shares its process with other work (a benchmark, a Mininet
script, the REST API) holds a hundred thousand objects or more, and a walk over
them takes tens of milliseconds, which every packet-in that arrives meanwhile
waits (docs/results/capacity.md has the measured pauses). Freezing the heap once the
controller is up moves what exists then into a generation the collector never
walks again; later collections walk only what was made since.
"""

from __future__ import annotations

import gc


def freeze_heap() -> int:
    """Collect once, then exempt every object alive now from later collections; returns how many.

    From then on, what survives a collection of the middle generation is frozen too
    (``_freeze_survivors``), so the oldest generation stays empty and no collection
    walks the flows a reactive controller keeps adding. Frozen objects are still
    freed when nothing refers to them; only a reference cycle among them that turns
    to garbage later is not reclaimed (the approach of large Python services that
    turned the full collection off).

    >>> freeze_heap() > 0
    True
    """
    gc.collect()
    gc.freeze()
    if _freeze_survivors not in gc.callbacks:
        gc.callbacks.append(_freeze_survivors)
    return gc.get_freeze_count()


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    if phase == "stop" and info["generation"] == 1:
        gc.freeze()

