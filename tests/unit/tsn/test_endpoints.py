"""The TSSDN end systems over loopback: every frame timed, late sends counted apart when asked."""

from __future__ import annotations

import socket
import threading
from typing import Any

from srfabric_tools.testbed.stations import endpoints


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def exchange(late_after_ns: list[int] | None, **talk: Any) -> dict[str, Any]:
    port = free_udp_port()
    got: dict[str, Any] = {}
    listener = threading.Thread(target=lambda: got.update(endpoints.listen([port], 20, 3.0, None, 0, late_after_ns)))
    listener.start()
    try:
        sent = endpoints.talk("127.0.0.1", [(port, 0)], 1_000_000, 20, 64, 0, lead_ns=100_000_000, **talk)
    finally:
        listener.join(10)
    assert sent["sent"] == 20
    return got


def test_every_frame_arrives_and_is_timed() -> None:
    got = exchange(None)
    assert (got["frames"], got["lost"], got["late_sends"]) == (20, 0, 0)
    assert 0 <= got["min_ns"] <= got["p50_ns"] <= got["max_ns"]


def test_frames_sent_after_their_planned_time_are_counted_apart() -> None:
    got = exchange([-1_000_000_000])  # every send is "late" against a threshold in the past
    assert (got["frames"], got["lost"], got["late_sends"]) == (0, 0, 20)


def test_a_sender_that_knows_no_schedule_stamps_when_it_sent() -> None:
    got = exchange([0], spread=True, stamp_sent=True)
    assert (got["frames"], got["late_sends"]) == (20, 0)  # stamped when sent: never late


def test_a_listener_waits_longer_for_its_first_frame_than_for_the_next() -> None:
    # Talkers may start long after their listener (an emulated CPU starts many processes slowly); the
    # silence timeout only ends a listener once frames have come.
    port = free_udp_port()
    got: dict[str, Any] = {}
    listener = threading.Thread(target=lambda: got.update(endpoints.listen([port], 20, 0.2, None, 0, None, 10.0)))
    listener.start()
    try:
        threading.Event().wait(0.6)  # three silence timeouts before the talker starts
        endpoints.talk("127.0.0.1", [(port, 0)], 1_000_000, 20, 64, 0, lead_ns=100_000_000)
    finally:
        listener.join(15)
    assert (got["frames"], got["lost"]) == (20, 0)
