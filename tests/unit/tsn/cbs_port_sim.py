"""One egress port running 802.1Q's credit-based shaper for classes A and B under time-triggered windows, frame
by frame: what ``cbs_bound``'s per-port delays must bound. Best effort always has a full-size frame waiting (the
worst for the classes); a frame may not start unless it ends before the next window (the guard band); no credit is
earned or spent while a window holds the gates closed (802.1Q 8.6.8.2).

A test helper, written from the standard's rules alone (not from the analysis it checks)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

CLASSES = ("A", "B")


@dataclass
class Port:
    rate_bps: float
    idle_slope_bps: dict[str, float]  # as run while the gates are open
    best_effort_bits: int
    cycle_ns: float = 1.0
    windows: list[tuple[float, float]] = field(default_factory=list)  # (start, end) within the cycle, ns
    credit_while_held: bool = True  # whether a class earns credit while its frame cannot end before a window

    def window_at(self, t: float) -> tuple[float, float] | None:
        """The window holding time ``t`` (absolute start and end), if any."""
        base = t - t % self.cycle_ns
        for start, end in self.windows:
            if base + start <= t < base + end:
                return base + start, base + end
        return None

    def next_window(self, t: float) -> float:
        """When the next window starts at or after ``t`` (infinity without windows)."""
        if not self.windows:
            return float("inf")
        base = t - t % self.cycle_ns
        starts = [base + s for s, _ in self.windows if base + s >= t] + [base + self.cycle_ns + self.windows[0][0]]
        return min(starts)


def worst_delays(port: Port, arrivals: list[tuple[float, str, int]], horizon_ns: float) -> dict[str, float]:
    """The longest wait, arrival to last bit sent, of each class's frames; ``arrivals``: (ns, class, bits)."""
    pending = list(arrivals)
    heapq.heapify(pending)
    queues: dict[str, list[tuple[float, int]]] = {cls: [] for cls in CLASSES}
    credit = dict.fromkeys(CLASSES, 0.0)
    worst = dict.fromkeys(CLASSES, 0.0)
    t = 0.0

    def admit_until(now: float) -> None:
        while pending and pending[0][0] <= now:
            at, cls, bits = heapq.heappop(pending)
            queues[cls].append((at, bits))

    def earn(span: float, sending: str | None, held: bool = False) -> None:
        """Credits over ``span`` ns with the gates open, ``sending`` the class on the wire (or None); ``held``: no
        frame may start before the next window (a guard band)."""
        for cls in CLASSES:
            slope = port.idle_slope_bps[cls]
            if held and not port.credit_while_held:
                continue
            if cls == sending:
                credit[cls] += (slope - port.rate_bps) * span / 1e9
            elif queues[cls]:
                credit[cls] += slope * span / 1e9
            elif credit[cls] < 0:
                credit[cls] = min(0.0, credit[cls] + slope * span / 1e9)
            else:
                credit[cls] = 0.0

    while t < horizon_ns:
        admit_until(t)
        window = port.window_at(t)
        if window is not None:  # gates closed: time passes, credit frozen
            t = window[1]
            continue
        room = port.next_window(t) - t
        choice = next((cls for cls in CLASSES if queues[cls] and credit[cls] >= 0
                       and queues[cls][0][1] * 1e9 / port.rate_bps <= room), None)
        bits = queues[choice][0][1] if choice else port.best_effort_bits
        span = bits * 1e9 / port.rate_bps
        if span > room:  # nothing fits before the window: wait for the next arrival or the window
            step = min(room, (pending[0][0] - t) if pending else room)
            earn(max(step, 1e-3), None, held=True)
            t += max(step, 1e-3)
            continue
        end = t + span
        for at in sorted(a for a, _, _ in pending if a < end):  # arrivals during the frame: backlog changes
            earn(at - t, choice)
            t = at
            admit_until(t)
        earn(end - t, choice)
        t = end
        if choice is not None:
            arrived, _ = queues[choice].pop(0)
            worst[choice] = max(worst[choice], t - arrived)
    for cls in CLASSES:  # frames still waiting at the end have waited at least this long
        for arrived, _ in queues[cls]:
            worst[cls] = max(worst[cls], horizon_ns - arrived)
    return worst


def periodic(streams: list[tuple[str, int, float, float]], horizon_ns: float) -> list[tuple[float, str, int]]:
    """Arrivals of periodic streams: (class, bits, interval ns, first arrival ns) each."""
    out = []
    for cls, bits, interval, offset in streams:
        at = offset
        while at < horizon_ns:
            out.append((at, cls, bits))
            at += interval
    return out
