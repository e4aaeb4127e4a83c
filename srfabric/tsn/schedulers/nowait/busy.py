"""The windows already placed on one directed link, kept so that the no-wait search asks "is this start
free?" in a few bisections instead of listing every window of the path for every new stream.

Frames of two streams on one link collide, over the hyperperiod, exactly when
their starts differ modulo the gcd ``g`` of the two periods by less than the
window of the one that starts first. So a link keeps its windows grouped by
their stream's period and, for each (period, g) a search has asked about, a
*view*: the group's windows modulo ``g``, sorted and merged, a window that
passes ``g`` split in two. A view is made once and kept up to date as windows
are added; a frame of a long period is never copied once per shorter one.

Examples
--------
>>> link = BusyLink()
>>> link.add(1000, 900, 200)  # a 1000 ns stream holds the link from 900 to 1100, i.e. 900-1000 and 0-100
>>> link.view(1000, 1000)
([0, 900], [100, 1000])
>>> link.clash(1000, 1000, 50, 100)  # a frame starting at 50 must move to 100
50
>>> link.clash(1000, 1000, 850, 100)  # one at 850 would reach 950: to 1000 (where the wrapped part waits)
150
>>> link.clash(1000, 1000, 300, 100)
0
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

Spans = tuple[list[int], list[int]]  # sorted, disjoint, half-open (begins, ends)


def insert_span(begins: list[int], ends: list[int], begin: int, end: int) -> None:
    """Add [begin, end) to the merged spans, joining any it overlaps or touches."""
    first = bisect_left(ends, begin)
    last = bisect_right(begins, end)
    if first < last:
        begin, end = min(begin, begins[first]), max(end, ends[last - 1])
        del begins[first:last], ends[first:last]
    begins.insert(first, begin)
    ends.insert(first, end)


def insert_window(spans: Spans, start: int, length: int, g: int) -> None:
    """Add a window modulo ``g``, split where it passes ``g``."""
    begin = start % g
    end = begin + length
    if end > g:
        insert_span(*spans, begin, g)
        insert_span(*spans, 0, end - g)
    else:
        insert_span(*spans, begin, end)


class BusyLink:
    """One directed link's windows (see the module)."""

    __slots__ = ("groups", "narrow")

    def __init__(self) -> None:
        self.groups: dict[int, tuple[Spans, list[int]]] = {}  # period -> (its windows modulo it, [longest])
        self.narrow: dict[tuple[int, int], Spans] = {}  # (period, g below it) -> that group's windows modulo g

    def add(self, period: int, start: int, length: int) -> None:
        """A frame of a stream of ``period`` holds the link from ``start`` for ``length`` in each period."""
        group = self.groups.get(period)
        if group is None:
            group = self.groups[period] = (([], []), [length])
        elif length > group[1][0]:
            group[1][0] = length
        spans = group[0]
        begins, ends = spans
        begin = start % period
        end = begin + length
        first = bisect_left(ends, begin)
        if end <= period and (first == len(begins) or begins[first] > end):  # the usual case, inlined: no merge
            begins.insert(first, begin)
            ends.insert(first, end)
        else:
            insert_window(spans, start, length, period)
        if self.narrow:
            for (other, g), view in self.narrow.items():
                if other == period:
                    insert_window(view, start, length, g)

    def longest(self, period: int) -> int:
        """The longest window of streams of ``period`` (0 if none)."""
        group = self.groups.get(period)
        return group[1][0] if group else 0

    def view(self, period: int, g: int) -> Spans:
        """The windows of streams of ``period`` modulo ``g`` (a divisor of it), merged; made from the windows
        modulo the period (the same residues)."""
        if g == period:
            return self.groups[period][0]
        spans = self.narrow.get((period, g))
        if spans is None:
            spans = self.narrow[period, g] = ([], [])
            for begin, end in zip(*self.groups[period][0], strict=True):
                insert_window(spans, begin, end - begin, g)
        return spans

    def clash(self, period: int, g: int, at: int, window: int) -> int:
        """How much later than ``at`` (a residue modulo ``g``) a frame holding the link for ``window`` must
        start to clear the first window of ``period`` it meets; 0 if it meets none."""
        return clash(self.view(period, g), at, window, g)


def clash(spans: Spans, at: int, window: int, g: int) -> int:
    """:meth:`BusyLink.clash` on one view."""
    begins, ends = spans
    i = bisect_right(begins, at) - 1
    if i >= 0 and ends[i] > at:  # starts inside a busy span
        return ends[i] - at
    i += 1
    if i < len(begins) and begins[i] < at + window:  # runs into the next one
        return ends[i] - at
    if at + window > g and begins and begins[0] < at + window - g:  # wraps into the first one
        return g + ends[0] - at
    return 0
