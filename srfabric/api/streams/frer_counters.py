"""Sequence-recovery counters (IEEE 802.1CB) from the end-system eliminators, as the API keeps and shows them.

An eliminator runs on a listener's host (``srfabric frer eliminate``, ``xdp.frer``), where the controller cannot
read it: it reports what it counted for each stream it saw, told by IPv4 addresses and UDP ports, and its two
settings. The API keeps the newest report of each interface (in memory: counters start again with the
eliminator), ties each stream to the admitted stream it belongs to, and answers in the ``ieee802-dot1cb-frer``
YANG module's terms: each interface's ``per-port-per-stream-counters`` (handle: the stream's ``stream_id``) and
a ``sequence-recovery`` entry per stream and interface, with srfabric's own part naming the streams.

>>> book = FrerBook(clock=lambda: 1000.0)
>>> report = FrerReport.model_validate({"interface": "h3-eth0", "history_length": 32, "reset_ms": 2000,
...     "streams": [{"source": "10.0.0.1", "source_port": 6001, "destination": "10.0.0.3",
...                  "destination_port": 6000, "counters": {"rx-passed-pkts": 5, "rx-discarded-pkts": 4}}]})
>>> book.keep(report)
>>> streams = [StreamEnds("s-1", "cam", 7, "10.0.0.1", "10.0.0.3", 6001, 6000)]
>>> document = book.document(streams)
>>> statistics = document["ietf-interfaces:interfaces"]["interface"][0]["statistics"]
>>> statistics["ieee802-dot1cb-frer:frer"]["per-port-per-stream-counters"][0]["rx-passed-pkts"]
5
>>> document["ieee802-dot1cb-frer:frer"]["sequence-recovery"][0]["history-length"]
32
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Annotated, Any, Literal

from pydantic import Field

from srfabric.api.resources.schemas import Strict
from srfabric.api.streams.newest import NewestReports
from srfabric.tsn.model.frer import COUNTERS

MAX_STREAMS = 4096  # the eliminator's table holds no more
Counter64 = Annotated[int, Field(ge=0, le=2**64 - 1)]
CounterName = Literal["rx-passed-pkts", "rx-discarded-pkts", "rx-out-of-order-pkts", "rx-lost-pkts", "rx-rogue-pkts",
                      "rx-resets"]
Port = Annotated[int, Field(ge=0, le=65535)]


class EliminatedStream(Strict):
    """One stream an eliminator saw: its IPv4 addresses and UDP ports, and its counters by YANG leaf name."""

    source: IPv4Address
    source_port: Port
    destination: IPv4Address
    destination_port: Port
    counters: dict[CounterName, Counter64]

    def count(self, leaf: str) -> int:
        """The counter named ``leaf`` (0 when the report left it out)."""
        return {str(name): value for name, value in self.counters.items()}.get(leaf, 0)


class FrerReport(Strict):
    """What one eliminator reports: where it runs, its settings (802.1CB's frerSeqRcvyHistoryLength and
    frerSeqRcvyResetMSec), and its streams."""

    reporter: str = Field(default="", pattern=r"^[A-Za-z0-9_.:@-]{0,64}$")  # the host: one interface name on many
    interface: str = Field(pattern=r"^[A-Za-z0-9_.:@-]{1,15}$")

    @property
    def where(self) -> str:
        """The interface as the answer names it: ``reporter/interface`` when the reporter said who it is."""
        return f"{self.reporter}/{self.interface}" if self.reporter else self.interface
    history_length: int = Field(ge=2, le=64)
    reset_ms: int = Field(ge=1, le=3_600_000)
    streams: list[EliminatedStream] = Field(max_length=MAX_STREAMS)


@dataclass(frozen=True)
class StreamEnds:
    """An admitted stream as the eliminators tell it: its talker's and listener's IPv4 addresses and UDP ports
    (a source port of 0: any)."""

    ident: str
    name: str
    handle: int
    source: str
    destination: str
    source_port: int
    destination_port: int

    def matches(self, seen: EliminatedStream) -> bool:
        return (str(seen.source), str(seen.destination), seen.destination_port) == (
            self.source, self.destination, self.destination_port) and self.source_port in (0, seen.source_port)


def stream_ends(streams: Sequence[dict[str, Any]], ports: dict[str, dict[str, Any]]) -> list[StreamEnds]:
    """The admitted streams (API records) as eliminators tell them; one whose ports hold no IPv4 address is left
    out."""
    def address(port_id: str) -> str | None:
        fixed = (ports.get(port_id) or {}).get("fixed_ips") or []
        return str(fixed[0].get("ip_address")) if fixed else None

    ends = []
    for record in streams:
        source, destination = address(record["talker"]), address(record["listener"])
        if source and destination:
            ends.append(StreamEnds(record["id"], record["name"], record["stream_id"], source, destination,
                                   record.get("udp_source_port") or 0, record["udp_destination_port"]))
    return ends


class FrerBook(NewestReports[FrerReport]):
    """The newest report of each interface, with when it came (``clock``: seconds)."""

    def keep(self, report: FrerReport) -> None:
        self.put(report.where, report)

    def tied(self, streams: Sequence[StreamEnds]) -> Iterator[tuple[str, float, FrerReport, EliminatedStream,
                                                                   StreamEnds | None]]:
        """Every reported stream with its interface, report time, report, and the admitted stream it is (or
        None)."""
        for interface, (at, report) in sorted(self.reports.items()):
            for seen in report.streams:
                yield interface, at, report, seen, next((s for s in streams if s.matches(seen)), None)

    def totals(self, streams: Sequence[StreamEnds]) -> dict[tuple[str, StreamEnds], dict[str, int]]:
        """Each (interface, admitted stream)'s counters, summed over what the eliminator holds of it (a stream
        of any source port may be several there)."""
        summed: dict[tuple[str, StreamEnds], dict[str, int]] = {}
        for interface, _, _, seen, stream in self.tied(streams):
            if stream is not None:
                counts = summed.setdefault((interface, stream), dict.fromkeys(COUNTERS.values(), 0))
                for leaf in counts:
                    counts[leaf] += seen.count(leaf)
        return summed

    def document(self, streams: Sequence[StreamEnds]) -> dict[str, Any]:
        """The counters and settings in ``ieee802-dot1cb-frer``'s terms, and srfabric's part: which stream each
        handle is, when each interface reported, and the streams no admitted stream matches."""
        interfaces: dict[str, list[dict[str, Any]]] = {}
        recovery: list[dict[str, Any]] = []
        unmatched: list[dict[str, str]] = []
        handles: dict[str, dict[str, str]] = {}
        reported = {interface: at for interface, (at, _) in self.reports.items()}
        for interface, _, _, seen, stream in self.tied(streams):
            interfaces.setdefault(interface, [])
            if stream is None:
                unmatched.append({"interface": interface, "source": f"{seen.source}:{seen.source_port}",
                                  "destination": f"{seen.destination}:{seen.destination_port}"})
        for (interface, stream), counts in self.totals(streams).items():
            report = self.reports[interface][1]
            interfaces[interface].append({"direction-out-facing": False, "handle": stream.handle, **counts})
            recovery.append({"index": len(recovery), "stream": [stream.handle], "port": [interface],
                             "direction-out-facing": False, "algorithm": {"vector": {}},
                             "history-length": report.history_length, "reset-timeout": report.reset_ms})
            handles[str(stream.handle)] = {"id": stream.ident, "name": stream.name}
        return {
            "ietf-interfaces:interfaces": {"interface": [
                {"name": name, "statistics": {"ieee802-dot1cb-frer:frer": {"per-port-per-stream-counters": counts}}}
                for name, counts in sorted(interfaces.items())]},
            "ieee802-dot1cb-frer:frer": {"sequence-recovery": recovery},
            "srfabric": {"handles": handles, "reported_at": reported, "unmatched": unmatched},
        }
