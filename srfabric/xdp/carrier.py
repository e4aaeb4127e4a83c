"""Carrier changes of the agent's interfaces, read from rtnetlink (RTMGRP_LINK): the XDP agent turns them into
OFPT_PORT_STATUS, as Open vSwitch does, so the controller sees a link go down at once.

Pure parsing apart from :func:`link_socket`: a netlink datagram in, (interface index, carrier up) out.

Examples
--------
>>> message = NLMSG.pack(NLMSG.size + IFINFO.size, RTM_NEWLINK, 0, 0, 0) + IFINFO.pack(0, 1, 7, 0x1 | 0x40, 0)
>>> link_events(message)
[(7, False)]
>>> link_events(NLMSG.pack(32, RTM_NEWLINK, 0, 0, 0) + IFINFO.pack(0, 1, 7, IFF_LOWER_UP | 0x41, 0))
[(7, True)]
"""

from __future__ import annotations

import socket
import struct

NLMSG = struct.Struct("=IHHII")  # length, type, flags, sequence, port id (host byte order)
IFINFO = struct.Struct("=BxHiII")  # family, device type, index, flags, change mask
RTM_NEWLINK, RTM_DELLINK = 16, 17
RTMGRP_LINK = 1
IFF_LOWER_UP = 0x10000  # the carrier: a veth's peer is up, a NIC sees a signal


def link_events(data: bytes) -> list[tuple[int, bool]]:
    """(interface index, carrier up) for every link message in one netlink datagram; a deleted link is down.
    A truncated message ends the list (the kernel never sends one; nothing else is trusted)."""
    events, at = [], 0
    while at + NLMSG.size <= len(data):
        length, kind, _, _, _ = NLMSG.unpack_from(data, at)
        if length < NLMSG.size or at + length > len(data):
            break
        if kind in (RTM_NEWLINK, RTM_DELLINK) and length >= NLMSG.size + IFINFO.size:
            _, _, index, flags, _ = IFINFO.unpack_from(data, at + NLMSG.size)
            events.append((index, kind == RTM_NEWLINK and bool(flags & IFF_LOWER_UP)))
        at += (length + 3) & ~3  # messages are 4-byte aligned
    return events


def link_socket() -> socket.socket:
    """A non-blocking rtnetlink socket subscribed to link changes."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    sock.bind((0, RTMGRP_LINK))
    sock.setblocking(False)
    return sock
