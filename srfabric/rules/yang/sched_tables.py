"""Each port's ``gate-parameter-table`` read from a bridge's NETCONF XML (a ``<data>`` reply, or a ``<config>``
the bridge's server wrote): the list it was sent (admin), the list it runs (oper), whether a change is still
pending, and what its scheduler supports. Every malformed node is named; nothing is guessed.

Examples
--------
>>> reply = '''<data xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">
... <interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface><name>s1-eth3</name>
... <bridge-port xmlns="urn:ieee:std:802.1Q:yang:ieee802-dot1q-bridge">
... <gate-parameter-table xmlns="urn:ieee:std:802.1Q:yang:ieee802-dot1q-sched-bridge">
... <gate-enabled>true</gate-enabled>
... <admin-control-list><gate-control-entry><index>0</index><gate-states-value>2</gate-states-value>
... <time-interval-value>1000000</time-interval-value></gate-control-entry></admin-control-list>
... <admin-cycle-time><numerator>1</numerator><denominator>1000</denominator></admin-cycle-time>
... <admin-base-time><seconds>2</seconds><nanoseconds>0</nanoseconds></admin-base-time>
... <config-pending>true</config-pending><tick-granularity>10</tick-granularity>
... <supported-list-max>8</supported-list-max><supported-interval-max>1000000000</supported-interval-max>
... <supported-cycle-max><numerator>1</numerator><denominator>1</denominator></supported-cycle-max>
... </gate-parameter-table></bridge-port></interface></interfaces></data>'''
>>> table = port_tables(reply, "s1")["s1-eth3"]
>>> table.admin.cycle_ns, table.admin.base_time_ns, table.admin.entries
(1000000, 2000000000, [GateEntry(mask=2, duration_ns=1000000)])
>>> table.oper is None, table.pending, table.capabilities.list_max
(True, True, 8)
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

from srfabric.errors import ModelError
from srfabric.rules.yang.xml_document import namespace
from srfabric.tsn.gates.capabilities import PortCapabilities
from srfabric.tsn.gates.gcl import GateEntry, PortGcl

IF = "{" + namespace("ietf-interfaces") + "}"
DOT1Q = "{" + namespace("ieee802-dot1q-bridge") + "}"
SB = "{" + namespace("ieee802-dot1q-sched-bridge") + "}"
REPLY_MAX_BYTES = 16 * 1024 * 1024  # a bridge's reply larger than this is refused unread


@dataclass(frozen=True)
class PortTable:
    """One port's gate-parameter-table as the bridge holds it; None where it holds no such node."""

    interface: str
    enabled: bool
    admin: PortGcl | None
    oper: PortGcl | None
    pending: bool | None
    capabilities: PortCapabilities | None
    change_time_ns: int | None = None


def reply_root(text: str | bytes, bridge: str) -> ElementTree.Element:
    """A bridge's reply as XML; ``ModelError`` naming the bridge when it is too large to read or not XML."""
    if len(text) > REPLY_MAX_BYTES:
        raise ModelError(f"bridge {bridge}", f"a reply of {len(text)} bytes, over the {REPLY_MAX_BYTES} read")
    try:
        return ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise ModelError(f"bridge {bridge}", f"the reply is not XML ({error})") from None


def port_tables(text: str | bytes, bridge: str) -> dict[str, PortTable]:
    """Every interface of ``text`` that has a gate-parameter-table, by name; ``ModelError`` naming the bridge,
    the interface and the node when a node is malformed."""
    root = reply_root(text, bridge)
    tables = {}
    for interface in root.iter(f"{IF}interface"):
        name = interface.findtext(f"{IF}name")
        table = interface.find(f"{DOT1Q}bridge-port/{SB}gate-parameter-table")
        if name is None or table is None:
            continue
        where = f"bridge {bridge} port {name}"
        tables[name] = _table(table, bridge, name, where)
    return tables


def _table(table: ElementTree.Element, bridge: str, name: str, where: str) -> PortTable:
    caps = None
    if table.find(f"{SB}supported-list-max") is not None:
        caps = PortCapabilities.from_yang(_plain(table), where)
    pending = table.findtext(f"{SB}config-pending")
    return PortTable(
        name, _bool(table.findtext(f"{SB}gate-enabled") or "false", where, "gate-enabled"),
        _gcl(table, "admin", bridge, name, where), _gcl(table, "oper", bridge, name, where),
        None if pending is None else _bool(pending, where, "config-pending"), caps,
        _time(table.find(f"{SB}config-change-time"), where, "config-change-time"))


def _gcl(table: ElementTree.Element, kind: str, bridge: str, name: str, where: str) -> PortGcl | None:
    entries = table.find(f"{SB}{kind}-control-list")
    cycle = table.find(f"{SB}{kind}-cycle-time")
    base = _time(table.find(f"{SB}{kind}-base-time"), where, f"{kind}-base-time")
    if entries is None or cycle is None or base is None:
        return None
    listed = []
    for entry in entries.findall(f"{SB}gate-control-entry"):
        listed.append((_int(entry.findtext(f"{SB}index"), where, f"{kind}-control-list index"),
                       GateEntry(_int(entry.findtext(f"{SB}gate-states-value"), where, "gate-states-value"),
                                 _int(entry.findtext(f"{SB}time-interval-value"), where, "time-interval-value"))))
    numerator = _int(cycle.findtext(f"{SB}numerator"), where, f"{kind}-cycle-time numerator")
    denominator = _int(cycle.findtext(f"{SB}denominator"), where, f"{kind}-cycle-time denominator")
    if denominator <= 0:
        raise ModelError(where, f"{kind}-cycle-time: denominator {denominator} is not positive")
    return PortGcl(bridge, "", name, numerator * 1_000_000_000 // denominator, base,
                   [entry for _, entry in sorted(listed, key=lambda pair: pair[0])])


def _time(node: ElementTree.Element | None, where: str, what: str) -> int | None:
    if node is None:
        return None
    seconds = _int(node.findtext(f"{SB}seconds"), where, f"{what} seconds")
    return seconds * 1_000_000_000 + _int(node.findtext(f"{SB}nanoseconds"), where, f"{what} nanoseconds")


def _plain(table: ElementTree.Element) -> dict[str, object]:
    """The capability leaves as the RFC 7951 members :meth:`PortCapabilities.from_yang` reads."""
    cycle = table.find(f"{SB}supported-cycle-max")
    leaves: dict[str, object] = {child.tag.removeprefix(SB): (child.text or "").strip() for child in table
                                 if not len(child)}
    if cycle is not None:
        leaves["supported-cycle-max"] = {"numerator": cycle.findtext(f"{SB}numerator"),
                                         "denominator": cycle.findtext(f"{SB}denominator")}
    return leaves


def _int(text: str | None, where: str, what: str) -> int:
    try:
        value = int((text or "").strip())
    except ValueError:
        raise ModelError(where, f"{what}: {text!r} is not an integer") from None
    if not 0 <= value < 2**64:
        raise ModelError(where, f"{what}: {value} is outside 0..2^64-1")
    return value


def _bool(text: str, where: str, what: str) -> bool:
    if text.strip() not in ("true", "false"):
        raise ModelError(where, f"{what}: {text!r} is not true or false")
    return text.strip() == "true"
