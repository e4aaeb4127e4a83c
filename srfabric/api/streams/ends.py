"""Where a stream's ends are, whether its path holds, and the stream as the controller steers it, kept between
changes: every change steers every admitted stream again (a stream whose path broke must be left out), and with
a thousand streams working each one out afresh would cost more than the change. Records are replaced, never
edited (``Snapshot.copy``), so a kept answer holds while the very records it was made from are the ones given,
and the fabric's version is the same. Pure: no I/O.

Examples
--------
>>> from srfabric.model.topo import tsn_fig1
>>> fabric = tsn_fig1().to_fabric()
>>> ends = Ends()
>>> calls = []
>>> def host(port):
...     calls.append(port["id"])
...     return port["name"]
>>> port = {"id": "p1", "name": "h1"}
>>> ends.host(fabric, port, {}, host), ends.host(fabric, port, {}, host), calls
('h1', 'h1', ['p1'])
>>> port = {**port, "name": "h2"}  # a new record: worked out again
>>> ends.host(fabric, port, {}, host), calls
('h2', ['p1', 'p1'])
>>> ends.round(fabric, {"p1": port}, {})
>>> record = {"id": "cam"}
>>> ends.steered(record, lambda: "steered"), ends.steered(record, lambda: "again")
('steered', 'steered')
>>> ends.round(fabric, {"p1": {**port}}, {})  # a port's record replaced: every stream is steered again
>>> ends.steered(record, lambda: "again")
'again'
>>> ends.path(fabric, ("s1", "s2")) is None
True
>>> ends.path(fabric, ("s1", "s4"))
RoutingError('path[1]: no link from s1 to s4.')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from srfabric.api.resources.attachments import port_host
from srfabric.api.storage.repository import Snapshot
from srfabric.errors import RoutingError
from srfabric.model.fabric import Fabric
from srfabric.rules.streams.steering import switch_path

Record = dict[str, Any]
T = TypeVar("T")


class Ends:
    """Port id -> (its record, the switches it was read with, the fabric version, its host name or None); stream
    id -> (its record, the steered stream), for the round ``_round`` (fabric version, switches, port records); a
    path -> why it does not hold (None when it does), for the fabric version ``_paths_at``."""

    def __init__(self) -> None:
        self._hosts: dict[str, tuple[Record, Any, int, str | None]] = {}
        self._steered: dict[str, tuple[Record, Any]] = {}
        self._round: tuple[int, Any, dict[str, Record]] = (-1, None, {})
        self._paths: dict[tuple[str, ...], RoutingError | None] = {}
        self._paths_at = -1

    def host(self, fabric: Fabric, port: Record, switches: Any, resolve: Callable[[Record], str | None]
             ) -> str | None:
        """``resolve(port)``, kept while the port's record, ``switches`` and the fabric stay as they were."""
        kept = self._hosts.get(port["id"])
        if kept is not None and kept[0] is port and kept[2] == fabric.version and _same(kept[1], switches):
            return kept[3]
        name = resolve(port)
        self._hosts[port["id"]] = (port, switches, fabric.version, name)
        return name

    def round(self, fabric: Fabric, ports: dict[str, Record], switches: Any) -> None:
        """Before steering every stream of a snapshot: the kept streams stand only while the fabric, the switches
        and every port's record are as they were at the last round."""
        kept = self._round
        if not (kept[0] == fabric.version and _same(kept[1], switches) and kept[2].keys() == ports.keys()
                and all(port is kept[2][ident] for ident, port in ports.items())):
            self._steered = {}
        self._round = (fabric.version, switches, dict(ports))

    def kept(self, record: Record) -> Any:
        """The steering kept for the stream ``record`` while it is the very record (and the round stands), or
        None."""
        kept = self._steered.get(record["id"])
        return kept[1] if kept is not None and kept[0] is record else None

    def kept_all(self, records: Iterable[Record]) -> tuple[dict[str, Any], list[Record]]:
        """The steering kept for each of ``records`` (by stream id) and, apart, the records that have none."""
        kept_get, kept, rest = self._steered.get, {}, []
        for record in records:
            was = kept_get(record["id"])
            if was is not None and was[0] is record:
                kept[record["id"]] = was[1]
            else:
                rest.append(record)
        return kept, rest

    def steered(self, record: Record, steer: Callable[[], T]) -> T:
        """``steer()`` for the stream ``record``, kept while it is the very record (and the round stands)."""
        stream = self.kept(record)
        if stream is None:
            stream = steer()
            self._steered[record["id"]] = (record, stream)
        return cast(T, stream)

    def path(self, fabric: Fabric, names: Sequence[str]) -> RoutingError | None:
        """Why ``names`` is not a path of ``fabric`` (``switch_path``'s error), or None."""
        if self._paths_at != fabric.version:
            self._paths, self._paths_at = {}, fabric.version
        key = tuple(names)
        if key not in self._paths:
            try:
                switch_path(fabric, key)
                self._paths[key] = None
            except RoutingError as error:
                self._paths[key] = error
        return self._paths[key]


class Declared:
    """What the API last declared to the controller (its service functions and hosts, ``translate``d from every
    kind but streams) and the fabric as it stood after: a stream change leaves them as they were, and need not
    translate them again."""

    def __init__(self) -> None:
        self._kept: tuple[Fabric, int, dict[int, Any], dict[str, dict[str, Record]]] | None = None

    def same(self, fabric: Fabric, snap: Snapshot) -> bool:
        """Whether ``snap`` declares what was kept (the very records), to the same fabric at the same version."""
        kept = self._kept
        if kept is None or kept[0] is not fabric or kept[1] != fabric.version or kept[2] != snap.switches:
            return False
        return all(kind == "streams" or (records.keys() == kept[3][kind].keys()
                                         and all(record is kept[3][kind][ident] for ident, record in records.items()))
                   for kind, records in snap.resources.items())

    def keep(self, fabric: Fabric, snap: Snapshot) -> None:
        """``snap`` was declared to ``fabric``, which stands as it is now."""
        self._kept = (fabric, fabric.version, dict(snap.switches),
                      {kind: dict(records) for kind, records in snap.resources.items() if kind != "streams"})


def host_name(fabric: Fabric, switches: dict[int, tuple[str, str]], port: Record) -> str | None:
    """The name of the host ``port`` describes (``translate.port_host``), or None."""
    host = port_host(fabric, port, switches)
    return host.name if host is not None else None


def _same(kept: Any, given: Any) -> bool:
    """The switches an answer was made with: the very object, or an equal one."""
    return kept is given or kept == given
