"""The XDP agent's session with its controller, kept up: a switch that outlives its controller (fail mode secure)."""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Protocol

log = logging.getLogger("srfabric.xdp.agent")
RETRY_S = 1.0  # a controller gone is connected to again this often (Open vSwitch backs off to 8 s; srfabric sets 1)


class Switch(Protocol):
    """What the session needs of the agent (``agent.XdpAgent``)."""

    dpid: int
    writer: asyncio.StreamWriter | None
    outage: bool

    async def serve(self, host: str, port: int, tls: ssl.SSLContext | None = None) -> None: ...


async def keep_serving(agent: Switch, host: str, port: int, tls: ssl.SSLContext | None = None) -> None:
    """``serve``, and when the controller goes away (or is not there yet) connect again every ``RETRY_S``,
    forwarding meanwhile with the tables held and answering ARP from them, as Open vSwitch does in fail mode
    secure. A TLS handshake refused before any session ends it (configuration); after one, it is retried."""
    served = False
    while True:
        error: object = "closed"
        try:
            await agent.serve(host, port, tls)
        except ssl.SSLError as refused:
            if not served:
                raise
            error = refused
        except Exception as failed:  # noqa: BLE001 - a dropped or garbled session: the data plane goes on
            error = failed
        finally:
            served |= agent.writer is not None
            if agent.writer is not None:
                agent.writer.close()
            agent.writer = None
        if not agent.outage:  # said once per outage
            log.warning("switch %#x: controller %s:%d gone (%s): forwarding with the tables held, connecting "
                        "again", agent.dpid, host, port, error)
        agent.outage = True
        await asyncio.sleep(RETRY_S)
