"""``--gates netconf``: every gated port's list pushed to its bridge as an 802.1Qcw ``gate-parameter-table``,
one change all or none across the bridges. Each bridge takes the edit into its candidate datastore and a
confirmed commit (phase one, all bridges at once); only when every bridge has committed is each commit
confirmed (phase two). A refusal or a silent bridge in phase one cancels the commits already made, so every
bridge keeps its previous schedule; a bridge lost in phase two rolls back by itself at the confirm timeout and
is named, and gets its schedule again when it is back (``resend``). After the base time, ``switched`` reads
each bridge's oper state to confirm it runs the new lists.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from srfabric.errors import ModelError, SrfabricError, Unavailable
from srfabric.model.management import BridgeAccess
from srfabric.rules.yang.sched_tables import PortTable
from srfabric.rules.yang.xml_document import to_config
from srfabric.southbound.netconf.session import BridgeSession
from srfabric.tsn.gates.capabilities import PortCapabilities
from srfabric.tsn.gates.gcl import PortGcl
from srfabric.tsn.gates.render import idle_table, to_yang, u32_entries

SB_TABLE = "ieee802-dot1q-sched-bridge:gate-parameter-table"
REPLACED = frozenset({"admin-control-list"})  # a shorter list must not keep the held list's later entries


@dataclass
class Push:
    """What one change did, for the benchmark and the logs: the bridges it reached and its phases' times."""

    bridges: list[str] = field(default_factory=list)
    commit_s: float = 0.0
    confirm_s: float = 0.0


def released(interfaces: Iterable[str]) -> dict[str, Any]:
    """Ports that keep no list: their gates disabled (every queue open), with a whole one-entry admin list, since
    the published ``must`` statements compare the admin list and cycle with the capabilities even then."""
    return {"ietf-interfaces:interfaces": {"interface": [
        {"name": name, "ieee802-dot1q-bridge:bridge-port": {SB_TABLE: idle_table()}} for name in sorted(interfaces)]}}


def bridge_document(gcls: Sequence[PortGcl], freed: Iterable[str]) -> dict[str, Any]:
    """One bridge's edit: each list's table, and its freed ports disabled."""
    document = to_yang(list(gcls))
    document["ietf-interfaces:interfaces"]["interface"] += released(freed)["ietf-interfaces:interfaces"]["interface"]
    for interface in document["ietf-interfaces:interfaces"]["interface"]:
        interface.pop("type", None)  # the bridge has the interface already; its type is not srfabric's to set
    return document


class NetconfGates:
    """The ``Gates`` adapter for bridges on other machines; ``clock`` (seconds, monotonic) is passed in."""

    def __init__(self, bridges: dict[str, BridgeAccess], confirm_timeout_s: int = 30,
                 session: Callable[[BridgeAccess], BridgeSession] = BridgeSession,
                 clock: Callable[[], float] | None = None) -> None:
        self.sessions = {name: session(access) for name, access in bridges.items()}
        self.confirm_timeout_s = confirm_timeout_s
        self.clock = clock or time.perf_counter
        self.sent: dict[str, list[PortGcl]] = {}  # by bridge: the lists it runs, as srfabric sent them
        self.stale: set[str] = set()  # bridges that lost a change in phase two: sent again when back
        self.last = Push()
        self._session = session
        self._pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="netconf")  # threads start as needed

    def put(self, access: BridgeAccess) -> BridgeSession | None:
        """Reach ``access.name`` at ``access`` from now on (a new bridge, or one moved or re-keyed); a bridge that
        runs lists gets them again at the next ``resend`` if its new server does not hold them. Returns the
        session it replaced, for the caller to close where waiting on a dead server blocks nothing."""
        old = self.sessions.get(access.name)
        self.sessions[access.name] = self._session(access)
        return old

    def holding(self, name: str, wanted: Iterable[PortGcl] = ()) -> ModelError | None:
        """Why ``name`` cannot be forgotten: it runs lists srfabric sent, or lists ``wanted`` (the installer's)
        need it; None when neither."""
        held = sorted({g.interface for g in [*self.sent.get(name, []), *wanted] if g.node == name})
        return ModelError(f"bridge {name}", f"runs the gate lists of admitted streams on {', '.join(held)}; delete "
                                            "those streams first") if held else None

    def remove(self, name: str, wanted: Iterable[PortGcl] = ()) -> BridgeSession | None:
        """Stop reaching ``name`` (``ModelError`` while admitted streams need it); returns its session, to close."""
        held = self.holding(name, wanted)
        if held is not None:
            raise held
        self.sent.pop(name, None)
        self.stale.discard(name)
        return self.sessions.pop(name, None)

    def check(self, gcls: Sequence[PortGcl]) -> None:
        for gcl in gcls:
            if gcl.node not in self.sessions:
                raise ModelError(f"bridge {gcl.node}", f"port {gcl.interface} needs gates, but the bridge has no "
                                                       "management address in the bridges file")

    def apply(self, gcls: Sequence[PortGcl]) -> None:
        self.check(gcls)
        wanted: dict[str, list[PortGcl]] = {name: [] for name in self.sessions}
        for gcl in gcls:
            wanted[gcl.node].append(gcl)
        changed = {name: lists for name, lists in wanted.items()
                   if name in self.stale or _key(lists) != _key(self.sent.get(name, []))}
        if not changed:
            self.last = Push()
            return
        edits = {name: to_config(bridge_document(lists, _freed(self.sent.get(name, []), lists)), REPLACED)
                 for name, lists in changed.items()}
        self._two_phase(edits, changed)

    def _two_phase(self, edits: dict[str, str], changed: dict[str, list[PortGcl]]) -> None:
        """Both phases; ``sent`` then holds what each bridge runs: the new lists where confirmed, the previous
        ones where nothing committed or a bridge was lost before its confirmation (it rolls back)."""
        token = uuid.uuid4().hex
        started = self.clock()
        failed = self.each(edits, lambda name: self.sessions[name].edit_and_commit(
            edits[name], token, self.confirm_timeout_s))
        committed = [name for name in edits if name not in failed]
        if failed:
            self.each(committed, lambda name: self.sessions[name].cancel(token))
            self.each(failed, lambda name: self.sessions[name].discard())
            raise _first(failed, "nothing changed on any bridge")
        commit_s = self.clock() - started
        lost = self.each(committed, lambda name: self.sessions[name].confirm(token))
        self.last = Push(sorted(edits), commit_s, self.clock() - started - commit_s)
        self.sent.update({name: changed[name] for name in committed if name not in lost})
        if lost:
            self.stale |= set(lost)
            raise _first(lost, f"it rolls back to its previous schedule within {self.confirm_timeout_s} s; the "
                               "other bridges run the new one, and it gets it again when it answers")
        self.stale -= set(edits)

    def each(self, names: Iterable[str], action: Callable[[str], None]) -> dict[str, SrfabricError]:
        """``action`` on every bridge at once; the errors by bridge."""
        futures = {name: self._pool.submit(action, name) for name in names}
        errors: dict[str, SrfabricError] = {}
        for name, future in futures.items():
            try:
                future.result()
            except SrfabricError as error:
                errors[name] = error
        return errors

    def capabilities(self, sessions: dict[str, BridgeSession] | None = None) -> dict[str, PortCapabilities]:
        """Each reachable bridge's capabilities (of ``sessions``, default all): the tightest over its ports (a
        bridge without a scheduler's capability leaves is left out)."""
        found: dict[str, PortCapabilities] = {}
        sessions = dict(self.sessions) if sessions is None else sessions  # the API may change them meanwhile
        errors = self.each(sessions, lambda name: _store(found, name, sessions[name]))
        if errors and not found:
            raise _first(errors, "no bridge answered")
        return found

    def switched(self, gcls: Sequence[PortGcl]) -> list[str]:
        """Bridges whose oper state does not run ``gcls`` (read after their base time), or switched to it away
        from a cycle boundary (``config-change-time``), naming the port."""
        problems: list[str] = []
        by_bridge: dict[str, list[PortGcl]] = {}
        for gcl in gcls:
            by_bridge.setdefault(gcl.node, []).append(gcl)
        errors = self.each(by_bridge, lambda n: _compare(self.sessions[n], by_bridge[n], problems))
        problems += [str(error) for error in errors.values()]
        return sorted(problems)

    def find_lost(self) -> None:
        """Mark stale every bridge whose admin lists differ from what was sent (a rollback, a restart without its
        configuration), reading all bridges at once; one that does not answer stays as it was."""
        sessions = dict(self.sessions)
        tables: dict[str, dict[str, PortTable]] = {}
        self.each(sessions, lambda name: tables.__setitem__(name, sessions[name].tables()))
        for name, held in tables.items():
            if any(not _same(held[g.interface].admin if g.interface in held else None, g)
                   for g in self.sent.get(name, [])):
                self.stale.add(name)

    def resend(self, read: bool = True) -> list[str]:
        """Send every stale bridge's lists again (``read``: after ``find_lost``): the bridges that now run them."""
        if read:
            self.find_lost()
        stale = sorted(self.stale)
        if stale:
            self.apply([gcl for lists in self.sent.values() for gcl in lists])
        return stale

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()
        self._pool.shutdown(wait=False)


def _key(gcls: Sequence[PortGcl]) -> list[tuple[Any, ...]]:
    return sorted((g.interface, g.cycle_ns, g.base_time_ns, tuple(g.entries)) for g in gcls)


def _freed(before: Sequence[PortGcl], now: Sequence[PortGcl]) -> set[str]:
    return {g.interface for g in before} - {g.interface for g in now}


def _first(errors: dict[str, SrfabricError], then: str) -> SrfabricError:
    name = sorted(errors)[0]
    error = errors[name]
    others = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    kind = Unavailable if isinstance(error, Unavailable) else ModelError
    return kind(error.field, f"{error.message}{others}; {then}")


def _store(found: dict[str, PortCapabilities], name: str, session: BridgeSession) -> None:
    caps = [table.capabilities for table in session.tables().values() if table.capabilities is not None]
    if caps:
        found[name] = PortCapabilities(
            min(c.list_max for c in caps), min((c.cycle_max for c in caps), key=lambda c: c[0] / c[1]),
            min(c.interval_max_ns for c in caps), max(c.tick_tenths_ns for c in caps))


def _compare(session: BridgeSession, gcls: list[PortGcl], problems: list[str]) -> None:
    tables = session.tables()
    for gcl in gcls:
        table = tables.get(gcl.interface)
        if not _same(table.oper if table is not None else None, gcl):
            problems.append(f"bridge {session.name} port {gcl.interface}: oper state does not run the list sent"
                            + ("" if table is None or not table.pending else " (config-pending)"))
        elif table is not None and table.change_time_ns is not None and gcl.cycle_ns and (
                table.change_time_ns - gcl.base_time_ns) % gcl.cycle_ns:
            problems.append(f"bridge {session.name} port {gcl.interface}: switched at {table.change_time_ns}, "
                            "not at a cycle boundary (a cycle ran a mix of two schedules)")


def _same(held: PortGcl | None, sent: PortGcl) -> bool:
    """Whether a list a bridge holds is the one sent (intervals over 32 bits were sent split)."""
    return held is not None and (held.cycle_ns, held.base_time_ns, held.entries) == (
        sent.cycle_ns, sent.base_time_ns, u32_entries(sent.entries))
