"""What the last translation made of each port, port pair and port chain (``translate``), kept so that a change
of the API costs what it touched rather than every resource held.

A port's host and a pair's functions are taken again while their records are the very same objects (the snapshot
replaces a record, never edits it). A port chain's translation reads several records; checking them all for
every chain at every change would cost as much as the chains held, so each chain's reads are indexed by record
id, and a change that names what it touched (``translate``'s ``touched``) makes again only the chains that read
it. That trust holds only for a cache that the last change's snapshot came from: a change refused or not kept
(a dry run, a switch that refused, a database that failed) calls ``distrust``, and the next translation checks
every chain's records; a change kept without a translation (a classifier made before its chain) adds what it
changed to ``pending``, which the next translation counts as touched.

Examples
--------
>>> cache = Translations()
>>> cache.read_by("pc1", {"fc1", "pg1"})
>>> cache.read_by("pc2", {"fc2", "pg1"})
>>> sorted(cache.readers_of({"pg1"}) - {"pg1"}), sorted(cache.readers_of({"fc2", "pc3"}) - {"fc2"})
(['pc1', 'pc2'], ['pc2', 'pc3'])
>>> cache.read_by("pc1", {"fc1"}); sorted(cache.readers_of({"pg1"}) - {"pg1"})
['pc2']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from srfabric.api.resources.attachments import HostIndex
from srfabric.model.chain import Chain
from srfabric.model.fabric import Host, ServiceFunction

Record = dict[str, Any]


@dataclass
class Translations:
    """The last translation's ports' hosts, pairs' functions and chains' chains, by id, with the records read."""

    context: tuple[Any, ...] = ()
    index: HostIndex = field(default_factory=lambda: HostIndex([]))
    hosts: dict[str, tuple[Record, Host | None]] = field(default_factory=dict)  # by port id, with its record
    names: dict[str, int] | None = None  # the switch names the ports' hosts were resolved by
    functions: dict[str, tuple[tuple[Any, ...], tuple[ServiceFunction, ServiceFunction] | None]] = \
        field(default_factory=dict)
    chains: dict[str, tuple[tuple[Any, ...], list[Chain]]] = field(default_factory=dict)
    reads: dict[str, frozenset[str]] = field(default_factory=dict)  # port chain id -> the record ids it read
    readers: dict[str, set[str]] = field(default_factory=dict)  # record id -> the port chains that read it
    trusted: bool = False  # the chains kept are those of the snapshot the next change starts from
    plan: Any = None  # the last translation's ``Plan``, which a trusted change patches
    pending: set[str] = field(default_factory=set)  # ids changed since, by changes that did not translate

    def start(self, hosts: list[Host], names: dict[str, int], fabric_names: dict[str, int]) -> HostIndex:
        """The index of ``hosts``; everything kept is forgotten when the hosts or the switch names changed."""
        context = (tuple(hosts), names, fabric_names)
        if context != self.context:
            self.context, self.index, self.functions, self.chains = context, HostIndex(hosts), {}, {}
            self.reads, self.readers, self.trusted, self.plan = {}, {}, False, None
        return self.index

    def same_context(self, hosts: list[Host], names: dict[str, int], fabric_names: dict[str, int]) -> bool:
        """Whether ``start`` would keep what it holds."""
        return (tuple(hosts), names, fabric_names) == self.context

    def hosts_named(self, names: dict[str, int]) -> None:
        """The switch names ports resolve by, once per translation: the ports' hosts are forgotten when they
        changed."""
        if self.names != names:
            self.names, self.hosts = names, {}

    def port_host(self, port: Record, make: Callable[[Record], Host | None]) -> Host | None:
        """``port``'s host as ``make(port)`` finds it, or as it found it last time for the very same record."""
        kept = self.hosts.get(port["id"])
        if kept is not None and kept[0] is port:
            return kept[1]
        host = make(port)
        self.hosts[port["id"]] = (port, host)
        return host

    def read_by(self, chain: str, ids: Iterable[str]) -> None:
        """Port chain ``chain``'s translation read the records ``ids`` (and no others)."""
        new = frozenset(ids)
        old = self.reads.get(chain, frozenset())
        for ident in old - new:
            readers = self.readers.get(ident)
            if readers is not None:
                readers.discard(chain)
                if not readers:
                    del self.readers[ident]
        for ident in new - old:
            self.readers.setdefault(ident, set()).add(chain)
        self.reads[chain] = new

    def readers_of(self, ids: Iterable[str]) -> set[str]:
        """The port chains that read any of ``ids``, with ``ids`` themselves (a port chain changed is one)."""
        found: set[str] = set()
        for ident in ids:
            found.add(ident)
            found |= self.readers.get(ident, set())
        return found

    def whole(self, plan: Any) -> None:
        """``plan`` is a whole translation of the snapshot the next change starts from."""
        self.plan, self.trusted = plan, True
        self.pending.clear()

    def forget_chain(self, ident: str) -> None:
        """Port chain ``ident`` is gone: what it made and what it read."""
        self.chains.pop(ident, None)
        self.read_by(ident, ())
        self.reads.pop(ident, None)

    def distrust(self) -> None:
        """The last translation's snapshot was not kept: the next one checks every chain's records."""
        self.trusted = False

    def keep_only(self, ports: dict[str, Record], pairs: dict[str, Record], chains: dict[str, Record]) -> None:
        """Forget the ports, pairs and chains no longer there."""
        for kept, present in ((self.hosts, ports), (self.functions, pairs)):
            for gone in [ident for ident in kept if ident not in present]:
                del kept[gone]
        for gone in [ident for ident in self.chains.keys() | self.reads.keys() if ident not in chains]:
            self.forget_chain(gone)
