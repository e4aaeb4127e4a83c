"""rtnetlink link messages become (interface index, carrier up); truncated or foreign messages are skipped."""

from __future__ import annotations

from srfabric.xdp.carrier import IFF_LOWER_UP, IFINFO, NLMSG, RTM_DELLINK, RTM_NEWLINK, link_events

NLMSG_DONE = 3


def message(kind: int, index: int, flags: int) -> bytes:
    return NLMSG.pack(NLMSG.size + IFINFO.size, kind, 0, 0, 0) + IFINFO.pack(0, 1, index, flags, 0)


def test_several_messages_in_one_datagram() -> None:
    data = (message(RTM_NEWLINK, 4, IFF_LOWER_UP | 1) + message(RTM_NEWLINK, 5, 1)
            + NLMSG.pack(NLMSG.size, NLMSG_DONE, 0, 0, 0) + message(RTM_DELLINK, 6, IFF_LOWER_UP))
    assert link_events(data) == [(4, True), (5, False), (6, False)]


def test_a_truncated_datagram_ends_the_list() -> None:
    whole = message(RTM_NEWLINK, 4, IFF_LOWER_UP)
    assert link_events(whole + whole[:20]) == [(4, True)]
    assert link_events(NLMSG.pack(8, RTM_NEWLINK, 0, 0, 0)) == []  # a length shorter than its own header
    assert link_events(b"") == []
