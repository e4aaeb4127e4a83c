"""The NETCONF XML srfabric sends a bridge and the state the bridge answers with pass ``yanglint`` against the
pinned modules (``../shared/yang``): the edit (each port's admin list, freed ports disabled), and a ``<get>``
reply holding the capability leaves and the oper state the bridge agent keeps. Malformed replies are refused
naming the bridge, the port and the node."""

from __future__ import annotations

from pathlib import Path

import pytest

from srfabric.bridge import oper_state
from srfabric.errors import ModelError
from srfabric.rules.yang.sched_tables import port_tables
from srfabric.rules.yang.xml_document import to_xml
from srfabric.southbound.netconf.gates import bridge_document
from srfabric.tsn.gates.capabilities import PortCapabilities
from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from tests.unit.tsn.test_yang_documents import live_gcls, yanglint

CAPS = PortCapabilities(list_max=64, cycle_max=(1, 100), interval_max_ns=10_000_000, tick_tenths_ns=10)


def bridge_tree(gcls: list[PortGcl], freed: set[str], state: bool) -> dict:
    """The tree a bridge holds after the edit: its interfaces (with their type) and the capability leaves beside
    each table (with ``state``, the tick granularity too)."""
    document = bridge_document(gcls, freed)
    for interface in document["ietf-interfaces:interfaces"]["interface"]:
        interface["type"] = "iana-if-type:ethernetCsmacd"
        table = interface["ieee802-dot1q-bridge:bridge-port"]["ieee802-dot1q-sched-bridge:gate-parameter-table"]
        table.update(CAPS.to_yang(state=state))
    return document


# An interface's own state, which ietf-interfaces makes mandatory in a whole datastore (``yanglint -t data``):
# the bridge's Linux interfaces have it; srfabric neither sends nor reads it.
INTERFACE_STATE = ("<admin-status>up</admin-status><oper-status>up</oper-status><if-index>{index}</if-index>"
                   "<statistics><discontinuity-time>2026-12-05T00:00:00Z</discontinuity-time></statistics>")


def with_oper(text: str, gcls: list[PortGcl]) -> str:
    """``text`` with each port's oper files inside its table, as netconfd serves them once the base time passed."""
    for index, gcl in enumerate(gcls, start=1):
        files = oper_state.running(gcl, 1_700_000_000_000_000_000)
        marker = f"<name>{gcl.interface}</name>"
        head, tail = text.split(marker, 1)
        body = "".join(value if value.startswith("<") else f"<{leaf}>{value}</{leaf}>" for leaf, value in files.items())
        tail = tail.replace("</gate-parameter-table>", body + "</gate-parameter-table>", 1)
        text = head + marker + INTERFACE_STATE.format(index=index) + tail
    return text


def test_the_edit_srfabric_sends_validates_in_the_bridges_tree(tmp_path: Path) -> None:
    gcls = live_gcls()
    done = yanglint(to_xml(bridge_tree(gcls, {"s9-eth1"}, state=False)), tmp_path, "config")
    assert done.returncode == 0 and "err" not in done.stderr, done.stderr


def test_the_bridges_oper_state_validates_and_reads_back_as_the_lists_sent(tmp_path: Path) -> None:
    gcls = live_gcls()
    document = bridge_tree(gcls, set(), state=True)
    reply = f'<data xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">{with_oper(to_xml(document), gcls)}</data>'
    inner = reply.removeprefix('<data xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">').removesuffix("</data>")
    done = yanglint(inner, tmp_path, "data")  # a whole datastore: every must statement is checked
    assert done.returncode == 0 and "err" not in done.stderr, done.stderr
    tables = port_tables(reply, "s1")
    for gcl in gcls:
        table = tables[gcl.interface]
        assert table.oper is not None and table.pending is False and table.capabilities == CAPS
        assert (table.oper.entries, table.oper.cycle_ns, table.oper.base_time_ns) == (
            gcl.entries, gcl.cycle_ns, gcl.base_time_ns)


def test_a_list_over_the_bridges_list_max_fails_yanglint_as_the_bridge_refuses_it(tmp_path: Path) -> None:
    long = [PortGcl("s1", "s2", "s1-eth1", 1_000_000, 0, [GateEntry(1 + n % 2, 10_000) for n in range(100)])]
    done = yanglint(to_xml(bridge_tree(long, set(), state=False)), tmp_path, "config")
    assert done.returncode != 0 and "supported-list-max" in done.stderr
    running = with_oper(to_xml(bridge_tree(long, set(), state=True)), long)  # and as oper state
    done = yanglint(running, tmp_path, "data")
    assert done.returncode != 0 and "supported-list-max" in done.stderr


@pytest.mark.parametrize(("reply", "named"), [
    ("<data><unclosed></data>", "the reply is not XML"),
    ("<data xmlns='urn:ietf:params:xml:ns:netconf:base:1.0'>" + "x" * (17 * 1024 * 1024) + "</data>", "bytes"),
])
def test_a_malformed_reply_is_refused_naming_the_bridge(reply: str, named: str) -> None:
    with pytest.raises(ModelError) as refused:
        port_tables(reply, "s4")
    assert refused.value.field == "bridge s4" and named in refused.value.message


def test_a_malformed_node_is_named_with_the_port() -> None:
    gcl = PortGcl("s1", "s2", "s1-eth1", 1_000_000, 0, [GateEntry(2, 1_000_000)])
    text = to_xml(bridge_document([gcl], set())).replace("<time-interval-value>1000000<", "<time-interval-value>x<")
    with pytest.raises(ModelError) as refused:
        port_tables(text, "s1")
    assert refused.value.field == "bridge s1 port s1-eth1"
    assert refused.value.message == "time-interval-value: 'x' is not an integer"
