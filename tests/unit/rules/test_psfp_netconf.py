"""PSFP over NETCONF as data: the bridge component a bridge starts with (its limits, which the published ``must``
statements read), srfabric's edit (the bridge by key, every stream's entries replaced, the streams gone removed,
the bridge's own leaves never sent), the handles read back from a reply, and every bad input named; a refusal
with several ``<rpc-error>``s in one line."""

from __future__ import annotations

import pytest
from lxml import etree
from ncclient.operations import RPCError

from srfabric.errors import ModelError
from srfabric.rules.yang.psfp_document import ROOMY, psfp_document
from srfabric.rules.yang.psfp_netconf import REPLACED, Held, held_filter, held_psfp, psfp_edit, startup_psfp
from srfabric.rules.yang.xml_document import to_config
from srfabric.southbound.netconf.session import refusal
from tests.unit.tsn.test_psfp import PORTS, edge_plans

SID = "urn:ieee:std:802.1Q:yang:ieee802-dot1cb-stream-identification"
PSFP = "urn:ieee:std:802.1Q:yang:ieee802-dot1q-psfp-bridge"
DOT1Q = "urn:ieee:std:802.1Q:yang:ieee802-dot1q-bridge"
BRIDGE = (f'<bridges xmlns="{DOT1Q}"><bridge><name>s1</name><component><name>c0</name>{{}}</component></bridge>'
          "</bridges>")


def test_the_edit_names_the_bridge_by_key_and_leaves_its_own_leaves_and_the_counters_to_it() -> None:
    plans = edge_plans()
    document = psfp_document("s1", "00-00-00-00-00-01", plans, PORTS, ROOMY)
    component = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
    for row in component["ieee802-dot1q-psfp-bridge:stream-filters"]["stream-filter-instance-table"]:
        row |= {"matching-frames-count": 9, "red-frames-count": 1}  # the API's document after a report
    held = Held({plans[0].handle: plans[0].handle, 40: 99, 41: plans[1].handle}, {"flow-meter-instance-table": {99},
                                                            "stream-gate-instance-table": {98}})
    edit = psfp_edit(document, held)
    bridge = edit["ieee802-dot1q-bridge:bridges"]["bridge"][0]
    assert set(bridge) == {"name", "component"} and set(bridge["component"][0]) == {
        "name", "ieee802-dot1q-psfp-bridge:flow-meters", "ieee802-dot1q-psfp-bridge:stream-filters",
        "ieee802-dot1q-psfp-bridge:stream-gates"}
    gates = bridge["component"][0]["ieee802-dot1q-psfp-bridge:stream-gates"]
    assert set(gates) == {"stream-gate-instance-table"}  # no capability leaf: the bridge holds its own
    text = to_config(edit, REPLACED)
    # identities 40 (stream 99) and 41 (a kept stream's, under another index), meter 99 and gate 98
    assert text.count('nc:operation="remove"') == 4
    assert "<index>40</index>" in text and "<index>41</index>" in text and "<flow-meter-instance-id>99<" in text
    assert "<stream-gate-instance-id>98<" in text
    assert text.count('nc:operation="replace"') == 4 * len(plans)
    assert "ietf-interfaces" not in text and "<address>" not in text and "-count>" not in text


def test_the_bridges_limits_and_address_are_checked_before_it_starts() -> None:
    start = startup_psfp("s1", "02-AA-00-00-00-01", ROOMY, 8)
    component = start["ieee802-dot1q-bridge:bridges"]["bridge"][0]["component"][0]
    assert component["ieee802-dot1q-psfp-bridge:stream-gates"]["supported-list-max"] == ROOMY.list_max
    with pytest.raises(ModelError, match="address.*aa-bb-cc-dd-ee-ff"):
        startup_psfp("s1", "02:aa:00:00:00:01", ROOMY, 8)
    with pytest.raises(ModelError, match="--flow-meters.*between 1 and 4294967295"):
        startup_psfp("s1", "02-AA-00-00-00-01", ROOMY, 0)
    with pytest.raises(ModelError, match="bridge name.*1 to 32"):
        startup_psfp("s" * 33, "02-AA-00-00-00-01", ROOMY, 8)


@pytest.mark.parametrize(("reply", "named"), [
    ("<data>", "not XML"),
    (f'<data><stream-identity xmlns="{SID}"><index>1</index><handle>-1</handle></stream-identity></data>',
     "handle '-1'"),
    (f'<data><stream-identity xmlns="{SID}"><handle>1</handle></stream-identity></data>', "index ''"),
    (f'<data><stream-identity xmlns="{SID}"><index>1</index><handle>4294967296</handle></stream-identity></data>',
     "uint32"),
    ("<data>" + BRIDGE.format(f'<flow-meters xmlns="{PSFP}"><flow-meter-instance-table><flow-meter-instance-id>'
                              "x</flow-meter-instance-id></flow-meter-instance-table></flow-meters>") + "</data>",
     "flow-meter-instance-table.*'x'"),
    (f'<data><stream-identity xmlns="{SID}"><index>²</index><handle>1</handle></stream-identity></data>', "index"),
    ("<data>" + " " * (16 * 1024 * 1024) + "</data>", "over the"),
])
def test_a_reply_that_is_not_a_bridges_streams_is_named(reply: str, named: str) -> None:
    with pytest.raises(ModelError, match=named):
        held_psfp(reply, "s1", "s1")


def test_what_a_bridge_holds_is_read_for_its_own_component_only() -> None:
    assert "<name>s&lt;1</name>" in held_filter("s<1")[1]
    gate = (f'<stream-gates xmlns="{PSFP}"><stream-gate-instance-table><stream-gate-instance-id>{{}}'
            "</stream-gate-instance-id></stream-gate-instance-table></stream-gates>")
    reply = (f'<data><stream-identity xmlns="{SID}"><index>3</index><handle>7</handle></stream-identity>'
             f'<bridges xmlns="{DOT1Q}"><bridge><name>s2</name><component><name>c0</name>{gate.format(8)}'
             f"</component></bridge><bridge><name>s1</name><component><name>c0</name>{gate.format(7)}"
             "</component></bridge></bridges></data>")
    assert held_psfp(reply, "s1", "s1") == Held({3: 7}, {"stream-gate-instance-table": {7}})
    with pytest.raises(ModelError, match="holds no bridge 's9'.*--name"):
        held_psfp(reply, "s1", "s9")


def test_a_refusal_of_several_errors_is_one_line_with_each_message_once() -> None:
    base = "urn:ietf:params:xml:ns:netconf:base:1.0"
    one = (f'<rpc-error xmlns="{base}"><error-type>application</error-type><error-tag>operation-failed</error-tag>'
           '<error-severity>error</error-severity><error-message>Number of elements\n must not be greater than '
           'supported-list-max</error-message></rpc-error>')
    errors = [RPCError(etree.fromstring(one)) for _ in range(3)]
    text = refusal(RPCError(etree.fromstring(one), errs=errors))
    assert text == "operation-failed (3 errors): Number of elements must not be greater than supported-list-max"
    assert refusal(errors[0]).startswith("operation-failed: Number")
