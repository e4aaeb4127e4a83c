"""SR class streams beside a live time-triggered schedule (``tsn.runtime.classes``): the gate lists the live
planner makes are the windows the classes wait out, and a schedule change that would break a promise is named."""

from __future__ import annotations

import pytest

from srfabric.errors import ModelError
from srfabric.model.topo import tsn_fig1
from srfabric.tsn.model.network import Stream
from srfabric.tsn.protect.cbs_classes import INSUFFICIENT_CLASS_BANDWIDTH, LATENCY_CHANGED, Refusal
from srfabric.tsn.runtime.classes import ClassPlanner, ClassRequest
from srfabric.tsn.runtime.live import LivePlanner, network_from_fabric

SAME_AS_BEST_EFFORT = {"A": 0, "B": 0}  # the SR queues' gates open when best effort's do (the live lists' layout)


def scheduled(pairs: list[tuple[str, str]]) -> LivePlanner:
    planner = LivePlanner(network_from_fabric(tsn_fig1().to_fabric()))
    for n, (src, dst) in enumerate(pairs):
        planner.admit(Stream(f"tt{n}", src, dst, period_ns=1_000_000, size_bytes=1400))
    return planner


def test_the_schedules_windows_lengthen_a_class_streams_bound() -> None:
    tt = scheduled([("h1", "h3"), ("h2", "h4"), ("h1", "h4")])
    classes = ClassPlanner(tt.network, traffic_classes=SAME_AS_BEST_EFFORT)
    stream = classes.admit(ClassRequest("cam", "A", "h1", "h3", 250_000, 300), tt.gcls(0))
    assert stream.route[0] == "h1" and stream.route[-1] == "h3"
    assert classes.bounds(tt.gcls(0))["cam"] > classes.bounds([])["cam"]


def test_a_schedule_change_that_would_break_a_promise_is_refused_with_code_7() -> None:
    tt = scheduled([("h1", "h3")])
    classes = ClassPlanner(tt.network, traffic_classes=SAME_AS_BEST_EFFORT)
    classes.admit(ClassRequest("probe", "A", "h1", "h3", 250_000, 300), tt.gcls(0))
    bound = classes.bounds(tt.gcls(0))["probe"]
    classes.remove("probe")
    classes.admit(ClassRequest("cam", "A", "h1", "h3", 250_000, 300, max_latency_ns=int(bound) + 1), tt.gcls(0))
    classes.check(tt.gcls(0))  # as it was admitted: kept
    for n in range(1, 4):  # more time-triggered streams through the same ports: more windows
        tt.admit(Stream(f"more{n}", "h1", "h3", period_ns=1_000_000, size_bytes=1400))
    with pytest.raises(Refusal) as refused:
        classes.check(tt.gcls(0))
    assert (refused.value.code, refused.value.field) == (LATENCY_CHANGED, "path") and "cam" in str(refused.value)


def test_gates_that_never_open_an_sr_queue_leave_it_no_time() -> None:
    tt = scheduled([("h1", "h3")])
    classes = ClassPlanner(tt.network)  # classes 3 and 2: the live lists open only 0 and 1
    with pytest.raises(Refusal) as refused:
        classes.admit(ClassRequest("cam", "A", "h1", "h3", 250_000, 300), tt.gcls(0))
    assert refused.value.code == INSUFFICIENT_CLASS_BANDWIDTH and not classes.streams


def test_a_request_between_non_hosts_is_named() -> None:
    classes = ClassPlanner(network_from_fabric(tsn_fig1().to_fabric()))
    with pytest.raises(ModelError, match="talker: 's1' is not a host"):
        classes.admit(ClassRequest("x", "A", "s1", "h3", 250_000, 300), [])
