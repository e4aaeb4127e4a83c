"""Each stream's part of the tables (its talker edge's entry, and with a second path the group that replicates
it), kept per (stream, fabric version): admitting one stream beside a thousand works out one stream's entries,
not a thousand. Pure: no I/O.

Examples
--------
>>> from srfabric.model.stream import SteeredStream
>>> from srfabric.model.topo import tsn_fig1
>>> from srfabric.rules import codec_rules, headers
>>> kept = StreamPlacements(codec_rules.rules_for("mac-nibble"), None)
>>> fabric = tsn_fig1().to_fabric()
>>> sre_switches = headers.sre_switches
>>> cam = SteeredStream("cam", 1, "h1", "h3", ("s1", "s2", "s5"))
>>> first = kept.placed(fabric, [cam], sre_switches(fabric))
>>> [dpid for dpid, _ in first["cam"].entries] == [fabric.hosts["h1"].dpid]
True
>>> kept.placed(fabric, [cam], sre_switches(fabric))["cam"] is first["cam"]  # nothing changed: the same object
True
>>> lost = SteeredStream("lost", 2, "h1", "h3", ("s1", "s9"))
>>> print(kept.placed(fabric, [lost], sre_switches(fabric))["lost"])
path[1]: 's9' is not a switch of the fabric.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from srfabric.errors import SrfabricError
from srfabric.model.fabric import Fabric
from srfabric.model.stream import SteeredStream
from srfabric.rules.codec_rules import CodecRules
from srfabric.rules.entries import FlowEntry, GroupEntry
from srfabric.rules.placement import Placement
from srfabric.rules.streams.frer import redundant_stream
from srfabric.rules.streams.steering import stream_entries

StreamPlaced = Placement | SrfabricError  # a stream's entries and groups, or why it has none


def stream_parts(fabric: Fabric, stream: SteeredStream, rules: CodecRules, sre: set[int], tt_queue: int | None
                 ) -> tuple[list[tuple[int, FlowEntry]], list[tuple[int, GroupEntry]]]:
    """A stream's entries and groups: one entry at its talker's edge, and with a second path the all group
    that replicates its frames (``rules.frer``)."""
    if stream.second_path:
        return redundant_stream(fabric, stream, rules, sre, tt_queue)
    return stream_entries(fabric, stream, rules, sre, tt_queue), []


class StreamPlacements:
    """Stream name -> (the stream, the fabric version it was placed at, its placement or error)."""

    def __init__(self, rules: CodecRules, tt_queue: int | None) -> None:
        self.rules, self.tt_queue = rules, tt_queue
        self.kept: dict[str, tuple[SteeredStream, int, StreamPlaced]] = {}
        self._last: tuple[Fabric | None, int, list[SteeredStream], dict[str, StreamPlaced]] = (None, -1, [], {})

    def placed(self, fabric: Fabric, streams: Sequence[SteeredStream], sre: set[int]) -> dict[str, StreamPlaced]:
        """Each of ``streams``' placement (worked out again only for a stream that changed, or after any change
        of the fabric: its entry depends on the hosts' addresses and ports); streams gone are forgotten."""
        version, kept_get, last = fabric.version, self.kept.get, self._last
        if last[0] is fabric and last[1] == version and len(last[2]) == len(streams) \
                and all(map(operator.is_, streams, last[2])):
            return dict(last[3])  # the very streams of the last call (a check, then the sync that follows it)
        out: dict[str, StreamPlaced] = {}
        for stream in streams:  # a thousand streams, one of them changed: keep this loop lean
            kept = kept_get(stream.name)
            if kept is None or kept[1] != version or (kept[0] is not stream and kept[0] != stream):
                kept = self.kept[stream.name] = (stream, version, self._place(fabric, stream, sre))
            out[stream.name] = kept[2]
        if len(self.kept) != len(out):  # every stream given is kept: more kept means some are gone
            self.kept = {name: self.kept[name] for name in out}
        self._last = (fabric, version, list(streams), out)
        return dict(out)

    def _place(self, fabric: Fabric, stream: SteeredStream, sre: set[int]) -> StreamPlaced:
        try:
            entries, groups = stream_parts(fabric, stream, self.rules, sre, self.tt_queue)
        except SrfabricError as error:
            return error
        return Placement(entries, groups)
