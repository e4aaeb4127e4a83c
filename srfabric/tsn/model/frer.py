"""IEEE 802.1CB's sequence recovery, the vector recovery algorithm (802.1CB-2017, 7.4.3.4), as a model: what
the elimination point does with each frame's R-TAG sequence number, and its counters, named as the
``ieee802-dot1cb-frer`` YANG module names them. The XDP program and the tests of it are checked against this.
Pure: the clock is passed in.

A frame is passed the first time its number is seen within the history window and discarded as a duplicate
after; a number too far from the newest one seen (a replayed or forged tag) is rogue and discarded; a number
shifted out of the window without being seen counts as lost; after ``reset_ns`` without a frame the next one
is taken whatever its number.

>>> recovery = VectorRecovery(history_length=8, reset_ns=10**9)
>>> [recovery.accept(n, now_ns=0) for n in (1, 2, 2, 4, 3, 1000)]
[True, True, False, True, True, False]
>>> recovery.counters()["rx-rogue-pkts"]
1
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

SEQ_SPACE = 1 << 16  # the R-TAG's 16-bit sequence number
# The leaves of ``ieee802-dot1cb-frer``'s per-port-per-stream-counters (802.1CB 10.8; the MIB's
# frerCpsSeqRcvyPassedPackets and so on).
COUNTERS = {"passed": "rx-passed-pkts", "discarded": "rx-discarded-pkts", "out_of_order": "rx-out-of-order-pkts",
            "lost": "rx-lost-pkts", "rogue": "rx-rogue-pkts", "resets": "rx-resets"}


@dataclass
class VectorRecovery:
    """One stream's recovery state at one elimination point."""

    history_length: int = 32  # frerSeqRcvyHistoryLength: 2 .. 2**15
    reset_ns: int = 2_000_000_000  # frerSeqRcvyResetMSec, in ns
    take_any: bool = True
    newest: int = 0  # RecovSeqNum
    history: int = 0  # SequenceHistory: bit i set when newest - i was seen
    filled: int = 0  # positions of the window that hold a number since the last reset
    last_ns: int | None = None  # when a frame last passed
    counts: Counter[str] = field(default_factory=Counter)  # by the short names of ``COUNTERS``

    def __post_init__(self) -> None:
        if not 2 <= self.history_length <= SEQ_SPACE // 2:
            raise ValueError(f"history_length: {self.history_length} is outside 2..{SEQ_SPACE // 2}")
        if self.reset_ns <= 0:
            raise ValueError(f"reset_ns: {self.reset_ns} must be positive")

    def accept(self, sequence: int, now_ns: int) -> bool:
        """Whether the frame numbered ``sequence`` goes on (True) or is eliminated."""
        if not 0 <= sequence < SEQ_SPACE:
            raise ValueError(f"sequence: {sequence} is outside 0..{SEQ_SPACE - 1}")
        if not self.take_any and self.last_ns is not None and now_ns - self.last_ns >= self.reset_ns:
            self.reset()  # nothing passed for the reset time: the stream (or its talker) started again
        if self.take_any:
            self.take_any, self.newest, self.history, self.filled = False, sequence, 1, 1
            return self._passed(now_ns)
        delta = (sequence - self.newest) % SEQ_SPACE
        if delta >= SEQ_SPACE // 2:
            delta -= SEQ_SPACE  # a number before the newest
        if abs(delta) >= self.history_length:
            self.counts["rogue"] += 1
            self.counts["discarded"] += 1
            return False
        if delta <= 0:
            bit = 1 << -delta
            if self.history & bit:
                self.counts["discarded"] += 1  # the other path's copy, or a replay inside the window
                return False
            self.history |= bit
            self.counts["out_of_order"] += 1
            return self._passed(now_ns)
        if delta > 1:
            self.counts["out_of_order"] += 1
        # The positions shifted out of the window: those that held a number since the last reset and were never
        # seen are lost.
        low, high = self.history_length - delta, min(self.history_length, self.filled)
        if high > low:
            dropped = self.history >> low & ((1 << (high - low)) - 1)
            self.counts["lost"] += high - low - bin(dropped).count("1")
        self.history = ((self.history << delta) | 1) & ((1 << self.history_length) - 1)
        self.filled = min(self.history_length, self.filled + delta)
        self.newest = sequence
        return self._passed(now_ns)

    def _passed(self, now_ns: int) -> bool:
        self.counts["passed"] += 1
        self.last_ns = now_ns
        return True

    def reset(self) -> None:
        """Take the next frame whatever its number (SequenceRecoveryReset)."""
        self.take_any, self.history = True, 0
        self.counts["resets"] += 1

    def counters(self) -> dict[str, int]:
        """The counters under ``ieee802-dot1cb-frer``'s names (sequence recovery, per stream)."""
        return {yang: self.counts[short] for short, yang in COUNTERS.items()}
