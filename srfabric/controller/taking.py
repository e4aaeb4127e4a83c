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
from srfabric.southbound.channel import SwitchConnection, SwitchError
from srfabric.southbound.ofbind import flow_delete_all
from srfabric.southbound.readback import group_from_ofp, match_from_ofp

if TYPE_CHECKING:
    from srfabric.controller.controller import ControllerConfig

log = logging.getLogger("srfabric.controller.controller")
STALE = (ofp.OFPET_ROLE_REQUEST_FAILED, ofp.OFPRRFC_STALE)  # a role request with an old generation id


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
    on_deposed: Callable[[str], None] | None
    _dirty: asyncio.Event
    _send_lldp: Callable[[SwitchConnection], None]
    _port_status: Callable[[int, int, bool, bool, bool], None]

    async def _on_ready(self, conn: SwitchConnection) -> None:
        fallback = conn.bridge_name or f"dp{conn.dpid:x}"  # a switch without a configured name keeps its own
        name, role = self.config.switch_names.get(conn.dpid, (fallback, "edge"))
        self.fabric.add_switch(Switch(conn.dpid, name, role))
        if self.following:
            if not await self._take_slave(conn):
                return  # gone meanwhile
            if self.following:  # (``lead`` may have begun meanwhile: then this switch is led below)
                self.switches[conn.dpid] = conn
                return
        await self._master_of(conn)

    async def _master_of(self, conn: SwitchConnection) -> None:
        """Take the switch (as MASTER when roles are used), learn what it holds, and start discovering. A
        switch that calls this leader's generation stale has a newer leader: this one steps down."""
        if self.generation is not None:
            try:
                await conn.request_role(ofp.OFPCR_ROLE_MASTER, self.generation)
            except SwitchError as error:
                if error.refused == STALE:
                    self.following = True
                    if self.on_deposed is not None:
                        self.on_deposed(f"switch {conn.dpid:#x} holds a newer generation than {self.generation}")
                    raise
                if error.refused is None:
                    raise  # gone
                log.warning("switch %#x takes no controller roles (%s)", conn.dpid, error)
        await self._read_back(conn)
        self.switches[conn.dpid] = conn
        self._send_lldp(conn)
        self._dirty.set()

    async def _take_slave(self, conn: SwitchConnection) -> bool:
        """SLAVE with the newest generation read, asked again until the switch takes it (a generation that is
        already stale is read again); False if the connection ends first. A switch that takes no roles (the XDP
        agent) is held as it is, and this follower sends it nothing all the same."""
        while not conn.closed.is_set() and self.following:
            try:
                await conn.request_role(ofp.OFPCR_ROLE_SLAVE, self.generation_seen())
                return True
            except SwitchError as error:
                if error.refused is None:
                    return False
                if error.refused != STALE:
                    log.warning("switch %#x takes no controller roles (%s)", conn.dpid, error)
                    return True
            await asyncio.sleep(0.3)
        return not conn.closed.is_set()

    async def lead(self, generation: int) -> None:
        """Stop following: take every connected switch as MASTER with ``generation`` (its old leader, if still
        connected, becomes SLAVE), read back what each holds, and note the ports that are down now (a
        follower ignores port reports). The caller has given the controller its chains and streams before
        (a sync then sends only what differs)."""
        self.following, self.generation = False, generation
        held = list(self.switches.values())
        self.switches.clear()  # back once read back: no sync pushes to a switch whose table is not known yet
        results = await asyncio.gather(*(self._master_of(conn) for conn in held), return_exceptions=True)
        for conn, result in zip(held, results, strict=True):
            if isinstance(result, Exception):  # gone meanwhile: it is taken again when it connects again
                log.warning("switch %#x: not taken over: %s", conn.dpid, result)
        for dpid, conn in list(self.switches.items()):
            for port, info in conn.ports.items():
                if info.down:
                    self._port_status(dpid, port, False, True, False)

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
