"""Taking a switch that connects, over its connection: its OpenFlow controller role when several instances
share the switches (a follower is SLAVE and leaves the tables alone; the leader is MASTER with a generation id),
and what its tables hold (read back, so a controller that restarts or takes over sends only what differs).
These are the shell's requests and their answers; what follows from them is the core's (``core.switch_ready``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.controller.reconcile import Held, HeldGroups
from srfabric.errors import SrfabricError
from srfabric.rules.openflow.ofbind import flow_delete_all, meter_delete
from srfabric.rules.openflow.readback import group_from_ofp, match_from_ofp
from srfabric.southbound.channel import SwitchConnection, SwitchError

log = logging.getLogger("srfabric.controller.controller")
STALE = (ofp.OFPET_ROLE_REQUEST_FAILED, ofp.OFPRRFC_STALE)  # a role request with an old generation id


async def take_master(conn: SwitchConnection, generation: int | None) -> None:
    """MASTER with ``generation`` (None: roles are not used). A ``SwitchError`` refused with ``STALE`` says
    another instance leads; a switch that takes no roles (the XDP agent) is taken all the same."""
    if generation is None:
        return
    try:
        await conn.request_role(ofp.OFPCR_ROLE_MASTER, generation)
    except SwitchError as error:
        if error.refused is None or error.refused == STALE:
            raise  # gone, or deposed
        log.warning("switch %#x takes no controller roles (%s)", conn.dpid, error)


async def take_slave(conn: SwitchConnection, generation_seen: Callable[[], int],
                     following: Callable[[], bool]) -> bool:
    """SLAVE with the newest generation read, asked again until the switch takes it (a generation that is
    already stale is read again); False if the connection ends first. A switch that takes no roles (the XDP
    agent) is held as it is, and a follower sends it nothing all the same."""
    while not conn.closed.is_set() and following():
        try:
            await conn.request_role(ofp.OFPCR_ROLE_SLAVE, generation_seen())
            return True
        except SwitchError as error:
            if error.refused is None:
                return False
            if error.refused != STALE:
                log.warning("switch %#x takes no controller roles (%s)", conn.dpid, error)
                return True
        await asyncio.sleep(0.3)
    return not conn.closed.is_set()


async def read_meters(conn: SwitchConnection) -> set[int]:
    """The ids of the meters a switch holds; none for a switch without meters (it refuses the request). Meters
    that cannot be read are deleted instead, and with them (OpenFlow 1.3, 7.3.4.5) the entries that use them."""
    try:
        return {config.meter_id for config in await conn.meter_config()}
    except SwitchError as error:
        if error.refused is None:
            log.info("switch %#x: meters not read back (%s); deleting them", conn.dpid, error)
            conn.send(meter_delete(ofp.OFPM_ALL))
            await conn.barrier()
        return set()


async def read_back(conn: SwitchConnection) -> tuple[Held, HeldGroups, set[int]]:
    """What a connecting switch holds; a table that cannot be read is flushed instead. Meters first: deleting
    unreadable ones deletes entries too."""
    held_meters = await read_meters(conn)
    try:
        stats = await conn.flow_stats()
        held = {(s.table_id, s.priority, match_from_ofp(s.match)): s.cookie for s in stats}
    except (SrfabricError, ValueError, KeyError, TypeError) as error:
        log.info("switch %#x: flow table not read back (%s); flushing it", conn.dpid, error)
        conn.send(flow_delete_all())
        await conn.barrier()
        held = {}
    try:
        groups = await conn.group_desc()
        held_groups = {g.group_id: group_from_ofp(g) for g in groups}
    except SrfabricError:
        held_groups = {}  # a switch without groups (the XDP agent) refuses the request
    return held, held_groups, held_meters
