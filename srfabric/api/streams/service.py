"""Streams on the live fabric, as the API sees them: records in, decisions out, errors as HTTP.

The decisions are the core's: the planner (``controller.stream_planning``), admission, moves and redundant trees
(``tsn.runtime.changes``, ``api.redundant``); the shell (``controller.stream_install``) carries them out. This
module translates between them and the API's records; SR classes A and B are ``sr_classes``'.

A stream of priority 7 is admitted into a slot on one of its k shortest paths (or on the path it names), if need
be by moving up to two admitted streams to other free slots or paths of their own, or refused with 409 and the
reason; a lower priority is a best-effort flow class that is only pinned to its path. A moved stream's new slot
takes effect with the gates' base time; its talker reads its new offset from the schedule. Each change (create,
re-route, delete) goes out as one sync: only the talkers' edges receive entries. The gate control lists of every
egress port on a scheduled path then switch at one common base time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from srfabric.api.errors import ApiError, bad_request, in_use
from srfabric.api.resources.translate import translate
from srfabric.api.storage.repository import Record, Snapshot
from srfabric.api.streams.ends import Declared, Ends, host_name
from srfabric.api.streams.frer_counters import FrerBook
from srfabric.api.streams.gate_answers import gate_answers
from srfabric.api.streams.psfp_book import PsfpBook
from srfabric.api.streams.records import fill, placed_in
from srfabric.api.streams.redundant import TT_PRIORITY, Undos, replan_redundant, trees
from srfabric.api.streams.schedule_view import LastChange, bridges_view, schedule_view
from srfabric.api.streams.sr_classes import SrClasses, sr_class
from srfabric.controller.controller import Controller
from srfabric.controller.stream_install import Installed, StreamInstaller
from srfabric.controller.stream_planning import (
    KeptStream,
    StreamEffects,
    StreamPlanning,
    clock_refusal,
    latency_bound_ns,
)
from srfabric.errors import ModelError, RoutingError, SrfabricError
from srfabric.model.stream import SteeredStream
from srfabric.rules.streams.steering import check_path_ends
from srfabric.southbound.gates import Gates
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.model.network import Stream
from srfabric.tsn.runtime.changes import StreamAsk, change_batch, change_one
from srfabric.tsn.runtime.clock_watch import ClockWatch
from srfabric.tsn.runtime.live import CycleConfig, LivePlanner, Refused

log = logging.getLogger(__name__)


class StreamService:
    """The streams of one API service (``SfcService``, whose lock every method runs under): ``current`` gives
    its snapshot, ``controller`` installs the streams."""

    def __init__(self, controller: Controller, current: Callable[[], Snapshot], cycle: CycleConfig | None = None,
                 gates: Gates | None = None, clock: Callable[[], int] | None = None, lead_ns: int = 200_000_000,
                 max_moves: int = 2) -> None:
        self.controller = controller
        self.current = current
        self.cycle = cycle or CycleConfig()
        self.planning = StreamPlanning(self.cycle)
        self.installer = StreamInstaller(controller, gates, clock, self.cycle.cycle_ns, lead_ns)
        self.max_moves = max_moves  # admitted streams an admission may move to make room (0: none)
        self.moved: list[str] = []
        self.last = LastChange()
        self.clocks: ClockWatch | None = None  # the bridges' gPTP states, when srfabric watches them
        self.ends = Ends()  # each port's host and each path's check, kept between changes
        self.declared = Declared()
        self.frer = FrerBook(time.time)  # the end-system eliminators' newest reports
        self.psfp = PsfpBook(time.time)  # the edges' newest per-stream policing counters

    @property
    def lead_ns(self) -> int:
        """How far ahead a gate change's common base time is set."""
        return self.installer.lead_ns

    @lead_ns.setter
    def lead_ns(self, value: int) -> None:
        self.installer.lead_ns = value

    @property
    def clock(self) -> Callable[[], int]:
        """TAI nanoseconds, as the gates' base times count them (passed in; tests set it)."""
        return self.installer.clock

    @clock.setter
    def clock(self, value: Callable[[], int]) -> None:
        self.installer.clock = value

    @property
    def gate_changes(self) -> int:
        """Gate schedules sent (for /metrics)."""
        return self.installer.gate_changes

    @property
    def gcls(self) -> list[PortGcl]:
        """What every gated port runs now."""
        return self.installer.gcls

    # -- the scheduler's view of the fabric ---------------------------------------------
    def planner(self, snap: Snapshot | None = None) -> LivePlanner:
        """The planner for the fabric as it is now, holding the kept streams' slots (rebuilt on a topology change)."""
        snap = snap or self.current()
        try:
            return self.planning.planner(self.controller.fabric, partial(self._kept, snap), snap.duty_percent)
        except ModelError as error:
            raise bad_request(f"fabric: the scheduler cannot use it: {error}", "StreamBadFabric") from None

    def _kept(self, snap: Snapshot) -> list[KeptStream]:
        """The admitted streams that hold a slot, in the model's terms; one whose ports no longer resolve keeps
        none (logged)."""
        kept = []
        for record in snap["streams"].values():
            if record["slot"] is None:
                continue
            try:
                # Not checked against today's links: a tree with a link down is the planner's to judge.
                ends = self._full_path(snap, {**record, "path": []})
                kept.append(KeptStream(self._stream(snap, record), (ends[0], *record["path"], ends[-1]),
                                       record["slot"], record["phase"], tuple(record.get("second_path") or ())))
            except (ApiError, SrfabricError) as error:
                log.warning("stream %s keeps no slot on this topology: %s", record["id"], error)
        return kept

    def _host(self, snap: Snapshot, port_id: str, role: str) -> str:
        port, fabric = snap["ports"].get(port_id), self.controller.fabric
        host = port and self.ends.host(fabric, port, snap.switches, partial(host_name, fabric, snap.switches))
        if host is None or host not in fabric.hosts:
            raise bad_request(f"{role}: port {port_id} is not a host attached to the fabric (it needs a MAC, an "
                              "IPv4 address and a binding:profile switch and port that the controller knows).")
        return host

    def _stream(self, snap: Snapshot, record: Record) -> Stream:
        talker = self._host(snap, record["talker"], "talker")
        listener = self._host(snap, record["listener"], "listener")
        if talker == listener:
            raise bad_request(f"listener: port {record['listener']} is the talker's host {talker}.")
        return Stream(record["id"], talker, listener, record["period_ns"], record["size_bytes"],
                      record["max_latency_ns"])

    def _unsynced(self, paths: list[list[str]]) -> ApiError | None:
        """The refusal (409) when a path crosses a bridge whose gPTP clock is not synchronised (``clocks``)."""
        reason = clock_refusal(self.clocks, paths)
        return None if reason is None else in_use("StreamNotAdmitted", reason)

    def bounds(self, record: Record) -> tuple[int, int | None]:
        """An admitted stream's latency bound (ns, talker to listener on its path) and, when it holds a slot, when
        its talker sends (ns from the start of the hyperperiod)."""
        snap = self.current()
        planner = self.planner()
        if sr_class(record) is not None:
            return self._classes(snap).bound_ns(planner.network, self.gcls, record["id"]), None
        latency = latency_bound_ns(planner, self._stream(snap, record), self._full_path(snap, record),
                                   tuple(record.get("second_path") or ()))
        return latency, planner.offset_ns(record["id"]) if record.get("slot") is not None else None

    def _full_path(self, snap: Snapshot | None, record: Record) -> tuple[str, ...]:
        """Talker, the record's switches, listener; each switch known and linked to the one before."""
        snap = snap or self.current()
        fabric = self.controller.fabric
        try:
            broken = self.ends.path(fabric, record["path"])
            if broken is not None:
                raise broken
            ends = self._host(snap, record["talker"], "talker"), self._host(snap, record["listener"], "listener")
            if record["path"]:
                check_path_ends(fabric, record["path"], fabric.hosts[ends[0]], fabric.hosts[ends[1]])
        except RoutingError as error:
            raise bad_request(str(error)) from None
        return (ends[0], *record["path"], ends[1])

    def _declare(self, snap: Snapshot) -> None:
        """The snapshot's service functions and hosts, in the controller's fabric (streams need its hosts)."""
        if self.declared.same(self.controller.fabric, snap):
            return  # as declared last time, to the fabric as it stands
        plan = translate(snap.resources, self.controller.fabric, snap.switches)
        self.controller.place(plan.functions, plan.hosts)
        self.declared.keep(self.controller.fabric, snap)

    # -- a change -----------------------------------------------------------------------
    async def apply(self, new: Snapshot, ident: str, meanwhile: Callable[[], None]) -> None:
        """Admit, move or free stream ``ident`` as ``new`` says, install it, then gate; on failure nothing stays."""
        self._declare(new)
        planner = self.planner()
        old = self.current()["streams"].get(ident)
        self.moved = []
        undo = self._replan(planner, new, ident, old)
        await self._install(planner, new, [ident], [ident], undo, meanwhile)

    async def apply_batch(self, new: Snapshot, idents: list[str], meanwhile: Callable[[], None]) -> dict[str, str]:
        """Admit the new streams ``idents`` of ``new`` together (:meth:`LivePlanner.admit_batch`), install
        them, then gate; the refused ones leave ``new`` and are returned with their reasons. 409 (nothing
        changed) when none is admitted; on any failure nothing stays."""
        self._declare(new)
        planner = self.planner()
        self.moved = []
        undo, refused = self._replan_batch(planner, new, idents)
        admitted = [ident for ident in idents if ident not in refused]
        await self._install(planner, new, admitted, admitted + self.moved, undo, meanwhile)
        return refused

    async def reoptimise(self, new: Snapshot, meanwhile: Callable[[], None]) -> None:
        """Re-solve every admitted stream's slot and path (S/PR, all kept, fewest link uses); the moved ones'
        records in ``new`` follow, their talkers' edges get entries and the gates switch at one base time.
        Nothing is sent when nothing moves; on failure nothing stays."""
        planner = self.planner()
        try:
            moved, undo = planner.reoptimise()
        except Refused as error:
            raise in_use("ScheduleNotApplied", str(error)) from None
        self.moved = [assignment.stream for assignment in moved]
        for assignment in moved:
            placed_in(new, new["streams"][assignment.stream], assignment)
        if not moved:
            meanwhile()
            self.last = LastChange({}, [], None, [])
            return
        await self._install(planner, new, [], self.moved, undo, meanwhile)

    async def _install(self, planner: LivePlanner, new: Snapshot, must: list[str], changed: list[str],
                       undo: Callable[[], None], meanwhile: Callable[[], None]) -> None:
        """Steer every stream of ``new`` (confirming ``changed``; one of ``must`` that cannot be steered is the
        answer), then gate every port at one base time (the installer); on failure ``undo`` puts the planner
        back and the previous streams and gates are restored."""
        unsynced = self._unsynced(trees([new["streams"][ident] for ident in changed if ident in new["streams"]]))
        if unsynced is not None:
            undo()
            raise unsynced
        try:
            steered = self._all_steered(new, must)
            effects = StreamEffects(steered, self._named(planner, new), [n for n in changed if n in steered] or None,
                                    undo)
            beyond = self.planning.beyond_capabilities(effects.gcls)
            if beyond is not None:
                raise in_use("StreamNotAdmitted", beyond)
            self._classes(new).check(planner.network, effects.gcls, "the new gate lists")
        except BaseException:
            undo()
            raise
        with gate_answers():
            installed = await self.installer.install(effects, meanwhile)
        self._record(installed)

    def _record(self, installed: Installed) -> None:
        names = self.controller.fabric.switches
        self.last = LastChange({names[d].name if d in names else hex(d): n for d, n in sorted(installed.sent.items())
                                if n}, sorted(g.interface for g in installed.gcls), installed.base_time_ns,
                               list(self.moved), sorted(installed.regated))

    async def reschedule(self, duty_percent: int | None) -> None:
        """New gates on every gated port for ``duty_percent`` (None: the streams' slots), all at one common
        future base time; no switch receives a flow entry. Refused (409, nothing changed) when an admitted
        stream's slot lies outside the new window."""
        planner = self.planner()
        before = planner.duty_percent
        try:
            planner.set_duty(duty_percent)
        except Refused as error:
            raise in_use("ScheduleNotApplied", str(error)) from None
        except ModelError as error:
            raise bad_request(str(error), "ScheduleBadRequest") from None
        snap = self.current()
        unsynced = self._unsynced(trees(list(snap["streams"].values())))
        gcls = self._named(planner, snap)  # the base time is set as they go out
        beyond = self.planning.beyond_capabilities(gcls)
        try:
            if unsynced is not None or beyond is not None:
                raise unsynced or in_use("ScheduleNotApplied", str(beyond))
            self._classes(snap).check(planner.network, gcls, "the new duty cycle")
        except ApiError:
            planner.set_duty(before)
            raise
        with gate_answers():
            installed = await self.installer.regate(gcls, lambda: planner.set_duty(before))
        self.last = LastChange({}, sorted(g.interface for g in installed.gcls), installed.base_time_ns,
                               regated=sorted(installed.regated))

    def _named(self, planner: LivePlanner, snap: Snapshot) -> list[PortGcl]:  # with the SR classes' shapers
        named = self.planning.named_gcls(planner, self.controller.fabric, self.controller.port_name, 0)
        return self._classes(snap).shaped(planner.network, named, self.cycle.cycle_ns, self.controller)

    def _replan(self, planner: LivePlanner, new: Snapshot, ident: str, old: Record | None) -> Callable[[], None]:
        """Change the planner for one stream (``changes.change_one``) and fill in its record in ``new``; returns
        how to undo it."""
        record = new["streams"].get(ident)
        if record is not None and record.get("num_seamless_trees", 1) > 1:  # two paths, one slot when timed
            ends = self._full_path(new, {**record, "path": []})
            new["streams"][ident], undo = replan_redundant(planner, self.controller.fabric, record, old,
                                                           (ends[0], ends[-1]), partial(self._stream, new, record))
            return undo
        if record is not None and sr_class(record) is not None:  # its path from the shaper's bound, then pinned
            record = new["streams"][ident] = self._classes(new).admit(planner.network, self.gcls, record)
        try:
            change = change_one(planner, ident, None if record is None else self._ask(new, record),
                                old is None, record is not None and old is not None and record["path"] != old["path"],
                                self.max_moves)
        except Refused as error:
            raise in_use("StreamNotAdmitted", str(error)) from None
        except SrfabricError as error:
            raise bad_request(str(error), "StreamBadRequest") from None
        self.moved = fill(new, change)
        return change.undo

    def _replan_batch(self, planner: LivePlanner, new: Snapshot, idents: list[str]
                      ) -> tuple[Callable[[], None], dict[str, str]]:
        """Admit new streams together: best-effort classes are pinned to their paths, time-triggered ones
        go to the planner as one batch (``changes.change_batch``); fills their records in ``new`` and drops the
        refused ones."""
        timed, undos, refused = [], Undos(), {}
        for ident in idents:
            record = new["streams"][ident]
            if record["priority"] != TT_PRIORITY or record.get("num_seamless_trees", 1) > 1:
                try:  # pinned to its path, or a redundant one (its slot on both trees, when time-triggered)
                    undos.append(self._replan(planner, new, ident, None))
                except ApiError as error:
                    if error.status != 409:
                        undos()
                        raise
                    refused[ident] = error.message
                    del new["streams"][ident]
                continue
            timed.append(self._ask(new, record))
        try:
            change = change_batch(planner, timed, self.max_moves)
        except SrfabricError as error:
            undos()
            raise bad_request(str(error), "StreamBadRequest") from None
        self.moved = fill(new, change)
        for ident in change.refused:
            del new["streams"][ident]
        refused |= change.refused
        undos.append(change.undo)
        if len(refused) == len(idents):
            undos()
            raise in_use("StreamNotAdmitted", "; ".join(f"{new_id}: {why}" for new_id, why in refused.items()))
        return undos, {ident: refused[ident] for ident in idents if ident in refused}

    def _ask(self, snap: Snapshot, record: Record) -> StreamAsk:
        """What the record asks; its ports are resolved to the fabric's hosts only as the change needs them
        (``ApiError`` naming a port that is none)."""
        return StreamAsk(partial(self._stream, snap, record), partial(self._full_path, snap, record),
                         bool(record["path"]), record["priority"] == TT_PRIORITY)

    def _all_steered(self, snap: Snapshot, must: list[str]) -> dict[str, SteeredStream]:
        """Every stream's steering (``Ends`` keeps it); one that cannot be steered any more (its path broke) is
        left out and logged, unless it is one of ``must``, the changed ones, whose error is the answer."""
        self.ends.round(self.controller.fabric, snap["ports"], snap.switches)
        steered, rest = self.ends.kept_all(snap["streams"].values())
        for record in rest:
            try:
                steered[record["id"]] = self.ends.steered(record, partial(self._steered, snap, record))
            except ApiError as error:
                if record["id"] in must:
                    raise
                log.warning("stream %s is not installed: %s", record["id"], error.message)
        if rest:  # in the snapshot's order, as the tables take them (the first of two that conflict stays)
            steered = {ident: steered[ident] for ident in snap["streams"] if ident in steered}
        return steered

    def _steered(self, snap: Snapshot, record: Record) -> SteeredStream:
        # A redundant stream's paths are checked by the rules: one whose link is down loses its bucket only.
        full = self._full_path(snap, {**record, "path": []} if record.get("second_path") else record)
        try:
            timed, klass = record["priority"] == TT_PRIORITY, record["priority"] if sr_class(record) else None
            return SteeredStream(record["id"], record["stream_id"], full[0], full[-1], tuple(record["path"]),
                                 record["udp_destination_port"], record["udp_source_port"], timed,
                                 tuple(record.get("second_path") or ()), klass,
                                 self.psfp.meter(record["period_ns"], timed))
        except ModelError as error:
            raise bad_request(str(error), "StreamBadRequest") from None

    # -- start and reads ----------------------------------------------------------------
    async def start(self, snap: Snapshot) -> None:
        """Install the kept streams where they were (their slots and paths), with fresh gates."""
        if not snap["streams"]:
            return
        self._declare(snap)
        planner = self.planner(snap)
        await self.installer.start(self._all_steered(snap, must=[]), self._named(planner, snap))

    def view(self) -> dict[str, Any]:
        """The schedule: the slot grid, each stream's slot and offset, each port's gates (taprio and YANG)."""
        try:
            planner = self.planner()
        except ApiError as error:
            return {"error": error.message}
        classes = self._classes(self.current()).view(planner.network, self.gcls)
        return {**schedule_view(planner, self.cycle, self.gcls, self.last), "classes": classes}

    def _classes(self, snap: Snapshot) -> SrClasses:
        return SrClasses(snap["streams"].values(), partial(self._full_path, snap))

    def bridges_view(self) -> dict[str, Any]:
        """Each bridge's capabilities as it reported them, and how it is reached (never its credentials)."""
        return bridges_view(self.planning.capabilities, self.installer.gates)
