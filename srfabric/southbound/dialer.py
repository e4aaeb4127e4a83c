"""Dialing switches that listen (``srfabric serve --dial HOST:PORT``).

A switch that connects to its controller retries on a timer of its own: Open vSwitch waits at least a whole second
after a connection ends before it tries again, so a restarted controller waits that long for its switches. A switch
that listens instead (Open vSwitch's ``pssl:`` or ``ptcp:`` controller target with ``type=primary``) is taken as
soon as the controller runs: the controller dials each address, and dials again shortly after a connection ends:
every 50 ms for the first 10 s (a switch made again, or a controller continued after a stop, is taken at once),
then less and less often, up to once a second (a switch that does not answer is tried every five). What follows
the connection (the OpenFlow handshake, the identity check, the hand-over to the controller) is the same as for a
switch that connects.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
import time
from collections.abc import Awaitable, Callable

from srfabric.errors import SrfabricError

log = logging.getLogger(__name__)

FIRST_RETRY_S = 0.05
LONGEST_RETRY_S = 1.0
EAGER_S = 10.0  # for this long after a connection ended (or the dialing began), every try waits FIRST_RETRY_S
STABLE_S = 1.0  # a connection that lasted this long ended for a reason of its own: dialed again at once
CONNECT_S = 5.0  # a TCP connect and TLS handshake that take longer count as failed
# A host name of dot-separated labels, an IPv4 address, or an IPv6 address (given in brackets).
HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
                  r"|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*")


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of a switch that listens, IPv6 hosts in brackets.

    >>> parse_address("127.0.0.1:16653")
    ('127.0.0.1', 16653)
    >>> parse_address("[::1]:6653")
    ('::1', 6653)
    >>> parse_address("a..b:6653")
    Traceback (most recent call last):
    srfabric.errors.SrfabricError: --dial: 'a..b:6653' is not HOST:PORT (a port from 1 to 65535)
    >>> parse_address("s1")
    Traceback (most recent call last):
    srfabric.errors.SrfabricError: --dial: 's1' is not HOST:PORT (a port from 1 to 65535)
    """
    host, _, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not HOST.fullmatch(host) or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise SrfabricError("--dial", f"{text!r} is not HOST:PORT (a port from 1 to 65535)")
    return host, int(port)


Take = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def dial_forever(take: Take, host: str, port: int, context: ssl.SSLContext | None,
                       failed: Callable[[str, str, bool], None],
                       sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                       clock: Callable[[], float] = time.monotonic) -> None:
    """Connect to ``host:port`` and hand the connection to ``take`` (which returns when it ends), again and
    again until cancelled. ``failed(why, reason, new)`` hears of every attempt that fails; ``new`` says whether
    its reason differs from the attempt before (so that a switch that stays away is logged once, not every
    second). No error ends the dialing but cancellation: a switch that listens never comes back by itself."""
    delay, last, lost_at = FIRST_RETRY_S, "", clock()
    while True:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=context, ssl_handshake_timeout=CONNECT_S if context else None),
                CONNECT_S)
        except Exception as error:  # noqa: BLE001  (OSError, ssl.SSLError, a timeout, or what the resolver raises)
            reason = str(error) or type(error).__name__
            why = "tls" if isinstance(error, ssl.SSLError) else "dial"
            failed(why, f"{host}:{port}: {reason}", reason != last)
            last = reason
            await sleep(delay)
            delay = FIRST_RETRY_S if clock() - lost_at < EAGER_S else min(delay * 2, LONGEST_RETRY_S)
            continue
        last = ""
        began = clock()
        try:
            await take(reader, writer)
        except Exception as error:  # noqa: BLE001  (what the hand-over did not expect: logged, then dialed again)
            log.exception("switch at %s:%d: its connection ended on an unexpected error", host, port)
            failed("error", f"{host}:{port}: {type(error).__name__}: {error}", True)
            writer.close()
        if clock() - began >= STABLE_S:
            delay, lost_at = FIRST_RETRY_S, clock()
        await sleep(delay)  # a switch refused or dropped at once is dialed less and less often, as after a failure
        delay = min(delay * 2, LONGEST_RETRY_S)
