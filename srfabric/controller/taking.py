"""How the controller takes a switch that connects: its name and role in the fabric, its OpenFlow controller
role when several instances share the switches (a follower is SLAVE and leaves the tables alone; the leader is
MASTER with a generation id), what its tables hold (read back, so a controller that restarts or takes over
sends only what differs), and the first LLDP.

A mixin of :class:`srfabric.controller.controller.Controller`, which holds the state named below.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from os_ken.ofproto import ofproto_v1_3 as ofp

from srfabric.errors import SrfabricError
from srfabric.model.fabric import Fabric, Switch
from srfabric.rules.entries import EntryKey, GroupEntry
from srfabric.southbound.channel import SwitchConnection
from srfabric.southbound.ofbind import flow_delete_all
from srfabric.southbound.readback import group_from_ofp, match_from_ofp

if TYPE_CHECKING:
    from srfabric.controller.controller import ControllerConfig

log = logging.getLogger("srfabric.controller.controller")


class Taking:
    """Switch take-over; the controller's state it works on is declared here for the type checker."""

    fabric: Fabric
    config: ControllerConfig
    switches: dict[int, SwitchConnection]
    installed: dict[int, dict[EntryKey, int]]
    installed_groups: dict[int, dict[int, GroupEntry | None]]
    following: bool
    generation: int | None
    generation_seen: Callable[[], int]
    _dirty: asyncio.Event
    _send_lldp: Callable[[SwitchConnection], None]

    async def _on_ready(self, conn: SwitchConnection) -> None:
        fallback = conn.bridge_name or f"dp{conn.dpid:x}"  # a switch without a configured name keeps its own
        name, role = self.config.switch_names.get(conn.dpid, (fallback, "edge"))
        self.fabric.add_switch(Switch(conn.dpid, name, role))
        if self.following:
            await self._take_role(conn, ofp.OFPCR_ROLE_SLAVE)
            if self.following:  # (``lead`` may have begun meanwhile: then this switch is led below)
                self.switches[conn.dpid] = conn
                return
        await self._master_of(conn)

    async def _master_of(self, conn: SwitchConnection) -> None:
        """Take the switch (as MASTER when roles are used), learn what it holds, and start discovering."""
        if self.generation is not None:
            await self._take_role(conn, ofp.OFPCR_ROLE_MASTER)
        await self._read_back(conn)
        self.switches[conn.dpid] = conn
        self._send_lldp(conn)
        self._dirty.set()

    async def _take_role(self, conn: SwitchConnection, role: int) -> None:
        """Ask for a role; a follower whose generation is already stale asks again with the newest it read.
        A switch that refuses roles (the XDP agent) is told the log."""
        for attempt in range(3):
            generation = self.generation if role == ofp.OFPCR_ROLE_MASTER else self.generation_seen()
            try:
                await conn.request_role(role, generation or 0)
                return
            except SrfabricError as error:
                if attempt == 2 or role == ofp.OFPCR_ROLE_MASTER:
                    log.warning("switch %#x: role %d not taken: %s", conn.dpid, role, error)
                    return
                await asyncio.sleep(0.3)

    async def lead(self, generation: int) -> None:
        """Stop following: take every connected switch as MASTER with ``generation`` (its old leader, if still
        connected, becomes SLAVE) and read back what each holds. The caller has given the controller its
        chains and streams before (a sync then sends only what differs)."""
        self.following, self.generation = False, generation
        held = list(self.switches.values())
        self.switches.clear()  # back once read back: no sync pushes to a switch whose table is not known yet
        results = await asyncio.gather(*(self._master_of(conn) for conn in held), return_exceptions=True)
        for conn, result in zip(held, results, strict=True):
            if isinstance(result, Exception):  # gone meanwhile: it is taken again when it connects again
                log.warning("switch %#x: not taken over: %s", conn.dpid, result)

    async def _read_back(self, conn: SwitchConnection) -> None:
        """Learn what a connecting switch holds; a table that cannot be read is flushed instead."""
        try:
            stats = await conn.flow_stats()
            self.installed[conn.dpid] = {(s.table_id, s.priority, match_from_ofp(s.match)): s.cookie for s in stats}
        except (SrfabricError, ValueError, KeyError, TypeError) as error:
            log.info("switch %#x: flow table not read back (%s); flushing it", conn.dpid, error)
            conn.send(flow_delete_all())
            await conn.barrier()
            self.installed[conn.dpid] = {}
        try:
            groups = await conn.group_desc()
            self.installed_groups[conn.dpid] = {g.group_id: group_from_ofp(g) for g in groups}
        except SrfabricError:
            self.installed_groups[conn.dpid] = {}  # a switch without groups (the XDP agent) refuses the request
