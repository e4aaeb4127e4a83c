"""The API's service layer: checks a change on a copy of the state, programs the data plane, then commits.

Every create, update and delete runs under one lock:
1. the change is checked and applied to a copy of the in-memory snapshot (``checks``);
2. the copy is translated into chains (``translate``) and the controller installs them,
   returning only after every switch confirmed with a barrier;
3. the change is written to the database in one transaction, which commits only after
   the barriers (its statements run while the switches work, so the two overlap).
A failure at any step leaves the snapshot, the data plane and the database as they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from srfabric.api.errors import ApiError, bad_request, database_unavailable, log_failure
from srfabric.api.leadership import Leadership
from srfabric.api.resources.attachments import restore_fabric
from srfabric.api.resources.common import find, host_port_record, matches_filters, select_fields
from srfabric.api.resources.kinds import KINDS
from srfabric.api.resources.translate import chain_message, translate
from srfabric.api.resources.translations import Translations
from srfabric.api.storage.repository import NotLeading, Record, Repository, Snapshot
from srfabric.api.streams.service import StreamService
from srfabric.codecs.macaddr import mac_to_str
from srfabric.controller.controller import Controller
from srfabric.errors import SrfabricError
from srfabric.logs import security_event
from srfabric.model.fabric import Fabric
from srfabric.southbound.gates import Gates
from srfabric.tsn.runtime.live import CycleConfig

log = logging.getLogger(__name__)

LIST_PARAMETERS = {"fields", "sort_key", "sort_dir", "limit", "marker", "page_reverse"}
FOLLOWER_READ_AGE_S = 0.2  # a follower's reads are at most this old


class SfcService:
    """networking-sfc's resources on one controller, kept in ``repo``."""

    def __init__(self, repo: Repository, controller: Controller, project: str = "srfabric",
                 cycle: CycleConfig | None = None, gates: Gates | None = None,
                 leadership: Leadership | None = None) -> None:
        self.repo = repo
        self.leadership = leadership  # None: the only instance on its database, always leading
        self._loaded_at = 0.0  # when a follower last read the database
        self.controller = controller
        self.streams = StreamService(controller, lambda: self.snapshot, cycle, gates)
        self.translations = Translations()  # what each port pair and chain made: a change translates what it touched
        self.project = project
        self.snapshot = Snapshot()
        self._changing = False  # a change's transaction is open: what the controller learns is kept after it
        self._learned_meanwhile = False
        self.lock = asyncio.Lock()
        controller.config.on_synced = self._on_synced

    # -- start ---------------------------------------------------------------------------
    async def start(self, streams: bool = True) -> None:
        """Load the kept state and give it to the controller before any switch connects (without ``streams``:
        the chains only, as an instance that shares the fabric but does not lead runs them)."""
        kept = self.snapshot = self.repo.load()
        restore_fabric(self.controller.fabric, kept.switches, kept.links, kept["ports"].values())
        await self._apply_kept()
        if not streams:
            return
        try:
            await self.streams.start(self.snapshot)
        except SrfabricError as error:
            log.warning("kept streams not fully installed: %s", error)

    # -- leadership (instances sharing a PostgreSQL database) -----------------------------
    def follow(self) -> None:
        """Until elected: serve reads from the database; the switches hold this controller as SLAVE."""
        leadership = self.leadership
        assert leadership is not None
        self.controller.following = True
        self.controller.generation_seen = lambda: leadership.generation
        self._fresh()

    async def take_over(self, generation: int) -> None:
        """Elected: load the kept state into the controller (still following, it sends nothing), then take the
        switches as MASTER with ``generation``, read back their tables and sync, which sends only what differs
        from what they hold. In that order: a sync before the state is loaded would remove what is right."""
        async with self.lock:
            security_event(log, "took_over", f"leading with generation {generation}", generation=generation)
            self.repo.fence = generation
            await self.start()
            await self.controller.lead(generation)
            try:
                await self.controller.sync()
            except SrfabricError as error:  # a switch refused something: the next sync tries again
                log.warning("first sync after taking over: %s", error)
                self.controller.request_sync()

    async def follow_state(self) -> None:
        """A follower that claims edges: the kept state changed (the leader wrote), so apply its resources again
        and sync its edges to them (the leader sends the gates their lists). Not its switches and links: it
        hears every switch and finds them itself, and a kept link may be one it has just seen go down."""
        if self.leadership is not None and not self.leadership.leading:
            async with self.lock:
                self.snapshot = self.repo.load()
                self._loaded_at = time.monotonic()
                await self._apply_kept()

    async def _apply_kept(self) -> None:
        """``_apply`` of the kept state; what the controller refuses of it is said in the log."""
        try:
            await self._apply(self.snapshot, check=False)
        except ApiError as error:
            log.warning("kept state not fully installed: %s", error.message)

    def _not_leading(self, error: NotLeading) -> ApiError:
        """Another instance leads now: stop leading (the controller's ``on_deposed`` ends the process) and tell
        the client to send its request again, to be redirected."""
        log.error("no longer leading: %s", error)
        self.controller.following = True
        if self.controller.on_deposed is not None:
            self.controller.on_deposed(str(error))
        return ApiError(503, "NotLeader", f"This instance no longer leads ({error}); nothing was changed. Send the "
                                          "request again: it is redirected to the leader.")

    def leader_elsewhere(self) -> str | None:
        """None when writes are taken here; else the leader's API URL ('' while none is elected)."""
        if self.leadership is None or self.leadership.leading:
            return None
        return self.leadership.leader_url or ""

    def _fresh(self) -> None:
        """A follower's snapshot, read again from the database when older than ``FOLLOWER_READ_AGE_S``."""
        if self.leadership is not None and not self.leadership.leading \
                and time.monotonic() - self._loaded_at > FOLLOWER_READ_AGE_S:
            self.snapshot = self.repo.load()
            self._loaded_at = time.monotonic()

    # -- reads ---------------------------------------------------------------------------
    def find_all(self, kind: str, filters: dict[str, list[str]], fields: list[str]) -> list[Record]:
        self._fresh()
        return [select_fields(r, fields) for r in self.snapshot[kind].values() if matches_filters(r, filters)]

    def show(self, kind: str, ident: str, fields: list[str]) -> Record:
        self._fresh()
        return select_fields(find(self.snapshot, kind, ident), fields)

    def fabric_view(self) -> dict[str, Any]:
        """What the controller discovered (``views.fabric_view``), each bridge's gPTP state, capabilities and
        management address and, with several instances, who leads and which edges each claims."""
        from srfabric.api.resources.views import declared_functions, fabric_view

        view = fabric_view(self.controller, self.labels())
        view["functions"] += declared_functions(self.controller, self.snapshot["ports"], self.snapshot.switches)
        lead, own, clocks = self.leadership, self.controller.channels, self.streams.clocks
        return {**view, "clocks": clocks.view() if clocks else {}, "bridges": self.streams.bridges_view(),
                "leadership": None if lead is None else lead.view(),
                "shares": {"edges": sorted(own.edges), "elsewhere": sorted(own.elsewhere)}}

    def labels(self) -> dict[str, str]:
        """What the views call each function and port chain (``views.labels_of``)."""
        from srfabric.api.resources.views import labels_of

        return labels_of(self.snapshot)

    # -- writes --------------------------------------------------------------------------
    async def create(self, kind: str, body: dict[str, Any]) -> Record:
        async with self.lock:
            new = self.snapshot.copy()
            record = KINDS[kind].create(new, body, self.project)
            await self._commit(new, kind, record["id"], steers=KINDS[kind].steering, created=True)
            return self.snapshot[kind].get(record["id"], record)  # a stream's record gains its slot and path

    async def create_streams(self, bodies: list[dict[str, Any]]) -> tuple[list[Record], list[dict[str, Any]]]:
        """Create several streams in one change, admitted together (``StreamService.apply_batch``): the
        admitted records, in the order asked, and each refused request (index, name, reason). 409 when none
        is admitted; a bad body (400) or any failure changes nothing."""
        async with self.lock:
            new = self.snapshot.copy()
            idents = [KINDS["streams"].create(new, body, self.project)["id"] for body in bodies]
            names = {ident: new["streams"][ident]["name"] for ident in idents}
            refused: dict[str, str] = {}
            with self._changing_database():
                try:
                    with self.repo.transaction() as db:

                        def write_rows() -> None:
                            for ident in idents:
                                if ident in new["streams"]:
                                    self.repo.save(db, "streams", new["streams"][ident], True)
                            for other in self.streams.moved:
                                self.repo.save(db, "streams", new["streams"][other])

                        refused = await self.streams.apply_batch(new, idents, meanwhile=write_rows)
                except ApiError:
                    raise
                except NotLeading as error:
                    raise self._not_leading(error) from None
                except Exception as error:
                    log_failure(log, error, "database write failed")
                    raise
            self.snapshot = new
            return ([new["streams"][ident] for ident in idents if ident not in refused],
                    [{"index": idents.index(ident), "name": names[ident], "reason": reason}
                     for ident, reason in refused.items()])

    async def update(self, kind: str, ident: str, body: dict[str, Any]) -> Record:
        async with self.lock:
            new = self.snapshot.copy()
            record = KINDS[kind].update(new, ident, body)
            await self._commit(new, kind, ident, steers=True)
            return self.snapshot[kind].get(ident, record)

    async def delete(self, kind: str, ident: str) -> None:
        async with self.lock:
            new = self.snapshot.copy()
            KINDS[kind].delete(new, ident)
            await self._commit(new, kind, ident, steers=KINDS[kind].steering)

    async def check(self, kind: str, method: str, ident: str | None, body: dict[str, Any]) -> Record | None:
        """What a create (POST), update (PUT) or delete would answer, without doing it: the same refusals (400
        for what the fabric cannot carry, 404, 409), checked against the chains installed now; nothing is sent to
        a switch or written. The record it would make, or None for a delete. Streams are not checked this way."""
        if kind == "streams":
            raise bad_request("dry_run: streams are admitted by a real create, not checked alone")
        async with self.lock:
            new = self.snapshot.copy()
            declared, record = KINDS[kind], None
            if method == "DELETE":
                declared.delete(new, ident or "")
            else:
                record = declared.create(new, body, self.project) if method == "POST" else \
                    declared.update(new, ident or "", body)
            if KINDS[kind].steering or self._touches_chains(new, kind, ident or (record or {}).get("id", "")):
                try:
                    plan = translate(new.resources, self.controller.fabric, new.switches, self.translations)
                except SrfabricError as error:
                    raise bad_request(str(error), "SfcBadRequest") from None
                finally:
                    self.translations.distrust()  # what a dry run translates is not the next change's base
                try:
                    self.controller.core.check_chains(plan.chains, plan.changed(self.controller.chains))
                except SrfabricError as error:
                    raise bad_request(chain_message(error, plan), "SfcBadRequest") from None
            return record

    async def reschedule(self, duty_percent: int | None) -> None:
        """The gates' new duty cycle on every gated port at one base time, kept in the database."""
        async with self.lock:
            new = self.snapshot.copy()
            new.duty_percent = duty_percent
            try:
                with self.repo.transaction() as db:
                    await self.streams.reschedule(duty_percent)
                    self.repo.save_schedule(db, duty_percent)
            except ApiError:
                raise
            except NotLeading as error:
                raise self._not_leading(error) from None
            except Exception as error:
                log_failure(log, error, "database write failed; restoring the gates")
                with contextlib.suppress(ApiError):
                    await self.streams.reschedule(self.snapshot.duty_percent)
                raise
            self.snapshot = new

    async def reoptimise(self) -> None:
        """Re-solve the admitted streams' slots and paths (all kept, on fewer links); the moved streams'
        records are kept in the database while their talkers' edges take the new entries."""
        async with self.lock:
            new = self.snapshot.copy()
            try:
                with self._changing_database(), self.repo.transaction() as db:

                    def write_rows() -> None:
                        for name in self.streams.moved:
                            self.repo.save(db, "streams", new["streams"][name])

                    await self.streams.reoptimise(new, meanwhile=write_rows)
            except NotLeading as error:
                raise self._not_leading(error) from None
            self.snapshot = new

    async def _commit(self, new: Snapshot, kind: str, ident: str, steers: bool, created: bool = False) -> None:
        with self._changing_database():
            await self._write(new, kind, ident, steers, created)

    @contextlib.contextmanager
    def _changing_database(self) -> Iterator[None]:
        """While a change holds the database, what the controller learns waits; it is kept afterwards."""
        self._changing = True
        try:
            yield
        finally:
            self._changing = False
            if self._learned_meanwhile:  # the database is free again: keep what the controller learned
                self._learned_meanwhile = False
                self._on_synced(self.controller.fabric)

    async def _write(self, new: Snapshot, kind: str, ident: str, steers: bool, created: bool) -> None:
        programs = steers or self._touches_chains(new, kind, ident)
        try:
            # The transaction commits when the block ends (after the barriers) and rolls back on any error.
            with self.repo.transaction() as db:

                def write_rows() -> None:
                    if ident in new[kind]:
                        self.repo.save(db, kind, new[kind][ident], created)
                    else:
                        self.repo.delete(db, kind, ident)
                    if kind == "streams":  # streams an admission moved to make room (records are replaced)
                        for other in self.streams.moved:
                            self.repo.save(db, kind, new[kind][other])

                if kind == "streams":  # admitted (or refused), installed at the talkers' edges, then gated
                    await self.streams.apply(new, ident, meanwhile=write_rows)
                elif programs:  # the rows are written while the switches work
                    await self._apply(new, check=True, meanwhile=write_rows, touched={ident})
                else:
                    write_rows()
                    self.translations.pending.add(ident)  # the next translation looks at it again
        except ApiError:  # refused before anything was sent, or by a switch (the controller took it back)
            raise
        except NotLeading as error:  # found before anything was sent: the fence is the transaction's first read
            raise self._not_leading(error) from None
        except Exception as error:
            unavailable = database_unavailable(error)  # the database went away: one line, and the client a 503
            log.error("database write failed%s; restoring the data plane",
                      f": {unavailable.message}" if unavailable else "", exc_info=unavailable is None)
            if programs and kind != "streams":  # a stream change puts back what it changed itself
                with contextlib.suppress(ApiError):
                    await self._apply(self.snapshot, check=False)
            raise unavailable or error from None
        self.snapshot = new

    def _touches_chains(self, new: Snapshot, kind: str, ident: str) -> bool:
        """Whether a change of this resource can change what chains do (so the data plane must follow)."""
        if kind == "port_pair_groups":
            return any(ident in pc["port_pair_groups"] for pc in new["port_chains"].values())
        if kind == "ports":
            return bool(new["port_chains"]) and ident in new["ports"]
        return False

    async def _apply(self, snap: Snapshot, check: bool, meanwhile: Callable[[], None] | None = None,
                     touched: set[str] | None = None) -> None:
        """Make the controller run ``snap``'s chains; raises ``ApiError`` (400) and changes nothing on failure.

        ``meanwhile`` runs while the switches work through the change; not at all if it is refused before
        anything is sent. ``touched``: the ids of the records changed (only what reads them is translated again).
        """
        try:
            plan = translate(snap.resources, self.controller.fabric, snap.switches, self.translations, touched)
        except SrfabricError as error:
            raise bad_request(str(error), "SfcBadRequest") from None
        try:
            self.controller.place(plan.functions, plan.hosts)
            changed = plan.changed(self.controller.chains) if check else None
            await self.controller.replace_chains(plan.chains, check=changed, meanwhile=meanwhile)
        except BaseException as error:  # refused, or not kept: the translation is not the next change's base
            self.translations.distrust()
            if isinstance(error, SrfabricError):  # the controller's refusal, in the API's terms
                raise bad_request(chain_message(error, plan), "SfcBadRequest") from None
            raise

    # -- what the controller learned -----------------------------------------------------
    def _on_synced(self, fabric: Fabric) -> None:
        """Keep learned hosts (as ports), links and switches, so that a restart routes as before."""
        if self.leadership is not None and not self.leadership.leading:
            return  # the leader keeps what is learned
        if self._changing:  # a change holds the database (SQLite: its write lock) until its barriers are in
            self._learned_meanwhile = True
            return
        undeclared = [host for name, host in fabric.hosts.items() if name not in self.controller.core.declared_hosts]
        ports = {port["mac_address"]: port for port in self.snapshot["ports"].values()} if undeclared else {}
        # New hosts, and learned ones whose addresses grew since they were kept (Neighbour Discovery after ARP).
        learned = [host for host in undeclared if (
            (port := ports.get(mac_to_str(host.mac))) is None or port.get("srfabric:discovered")
            and [ip["ip_address"] for ip in port["fixed_ips"]] != [host.ip, *host.ip6])]
        switches: dict[int, tuple[str, str]] = {dpid: (s.name, str(s.role)) for dpid, s in fabric.switches.items()}
        if not learned and (fabric.links, switches) == (self.snapshot.links, self.snapshot.switches):
            return
        try:
            with self.repo.transaction() as db:
                records = [host_port_record(host, fabric, self.project) for host in learned]
                for record in records:
                    self.repo.save(db, "ports", record, created=record["id"] not in self.snapshot["ports"])
                self.repo.save_fabric(db, dict(fabric.links), switches)
            self.snapshot["ports"].update((record["id"], record) for record in records)
            self.translations.pending.update(record["id"] for record in records)
            self.snapshot.links, self.snapshot.switches = dict(fabric.links), switches
        except NotLeading as error:
            self._not_leading(error)
        except Exception as error:  # the database may be briefly away; the next sync tries again
            log_failure(log, error, "could not keep the learned fabric")

