"""``serve --psfp-meters``: the meters' counters as a switch reports them become its PSFP report, under the stream
filters' leaf names, a meter's id its stream's handle."""

from __future__ import annotations

from os_ken.ofproto import ofproto_v1_3_parser as parser

from srfabric.api.streams.meter_task import MeterCount, meter_report
from srfabric.api.streams.psfp_book import MAX_STREAMS, PsfpBook


def stats(meter_id: int, frames_in: int, dropped: int) -> object:
    band = parser.OFPMeterBandStats(packet_band_count=dropped, byte_band_count=dropped * 100)
    return parser.OFPMeterStats(meter_id=meter_id, flow_count=1, packet_in_count=frames_in,
                                byte_in_count=frames_in * 100, duration_sec=2, duration_nsec=0, band_stats=[band])


def test_a_switchs_meters_become_its_report_by_stream_handle() -> None:
    report = meter_report("s1", [MeterCount.of(stats(3, 20_000, 18_002)), MeterCount.of(stats(1, 5, 0))])
    book = PsfpBook(lambda: 0.0)
    book.keep(report)
    counted = book.counters("s1")
    assert counted[3]["matching-frames-count"] == 20_000 and counted[3]["red-frames-count"] == 18_002
    assert counted[3]["passing-frames-count"] == 20_000 and counted[3]["not-passing-sdu-count"] == 0
    assert [seen.handle for seen in report.streams] == [1, 3]


def test_a_report_holds_no_more_streams_than_an_edge_and_never_more_red_than_in() -> None:
    report = meter_report("s1", [MeterCount(i, 1, 9) for i in range(1, MAX_STREAMS + 10)])
    assert len(report.streams) == MAX_STREAMS
    assert report.streams[0].counters["red-frames-count"] == 1
