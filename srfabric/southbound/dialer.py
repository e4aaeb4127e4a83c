"""Dialing switches that listen (``srfabric serve --dial HOST:PORT``).

A switch that connects to its controller retries on a timer of its own: Open vSwitch waits at least a whole second
after a connection ends before it tries again, so a restarted controller waits that long for its switches. A switch
that listens instead (Open vSwitch's ``pssl:`` or ``ptcp:`` controller target with ``type=primary``) is taken as
soon as the controller runs: the controller dials each address, and dials again shortly after a connection ends
(50 ms, doubling up to 1 s while attempts fail or connections end within a second). What follows the connection
(the OpenFlow handshake, the identity check, the hand-over to the controller) is the same as for a switch that
connects.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Awaitable, Callable

from srfabric.errors import SrfabricError

FIRST_RETRY_S = 0.05
LONGEST_RETRY_S = 1.0
CONNECT_S = 5.0  # a TCP connect and TLS handshake that take longer count as failed


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of a switch that listens, IPv6 hosts in brackets.

    >>> parse_address("127.0.0.1:16653")
    ('127.0.0.1', 16653)
    >>> parse_address("[::1]:6653")
    ('::1', 6653)
    >>> parse_address("s1")
    Traceback (most recent call last):
    srfabric.errors.SrfabricError: --dial: 's1' is not HOST:PORT (a port from 1 to 65535)
    """
    host, _, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise SrfabricError("--dial", f"{text!r} is not HOST:PORT (a port from 1 to 65535)")
    return host, int(port)


Take = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def dial_forever(take: Take, host: str, port: int, context: ssl.SSLContext | None,
                       failed: Callable[[str, str], None],
                       sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                       clock: Callable[[], float] = time.monotonic) -> None:
    """Connect to ``host:port`` and hand the connection to ``take`` (which returns when it ends), again and
    again until cancelled. ``failed(why, reason)`` hears of each attempt that fails after a success or with a new
    reason, so that a switch that stays away is logged once, not every second."""
    delay, last = FIRST_RETRY_S, ""
    while True:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=context, ssl_handshake_timeout=CONNECT_S if context else None),
                CONNECT_S)
        except (OSError, TimeoutError) as error:  # ssl.SSLError is an OSError: a certificate refused
            reason = str(error) or type(error).__name__
            why = "tls" if isinstance(error, ssl.SSLError) else "dial"
            if reason != last:
                failed(why, f"{host}:{port}: {reason}")
                last = reason
            await sleep(delay)
            delay = min(delay * 2, LONGEST_RETRY_S)
            continue
        last = ""
        began = clock()
        await take(reader, writer)
        if clock() - began >= LONGEST_RETRY_S:
            delay = FIRST_RETRY_S
        await sleep(delay)  # a switch refused or dropped at once is dialed less and less often, as after a failure
        delay = min(delay * 2, LONGEST_RETRY_S)
