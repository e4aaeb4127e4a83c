"""``push_psfp``'s shell: what the bridge holds is read first, the edit goes in as a confirmed commit confirmed
with its own token, and a refused edit leaves the candidate discarded and the error to the caller, unconfirmed."""

from __future__ import annotations

from typing import Any

import pytest

from srfabric.errors import ModelError
from srfabric.rules.yang.psfp_document import ROOMY, psfp_document
from srfabric.southbound.netconf.psfp import push_psfp
from tests.unit.tsn.test_psfp import PORTS, edge_plans

SID = "urn:ieee:std:802.1Q:yang:ieee802-dot1cb-stream-identification"
DOT1Q = "urn:ieee:std:802.1Q:yang:ieee802-dot1q-bridge"


class Bridge:
    """A bridge's session as ``push_psfp`` uses it: one held stream (handle 99), each call written down."""

    name = "s1"

    def __init__(self, refuse: bool = False) -> None:
        self.refuse, self.calls = refuse, []  # type: ignore[var-annotated]

    def call(self, what: str, action: Any) -> str:
        self.calls.append(what)
        return (f'<data><stream-identity xmlns="{SID}"><index>5</index><handle>99</handle></stream-identity>'
                f'<bridges xmlns="{DOT1Q}"><bridge><name>s1</name><component><name>c0</name></component></bridge>'
                "</bridges></data>")

    def edit_and_commit(self, config: str, token: str, confirm_timeout_s: int) -> None:
        self.calls.append(("commit", token, "<index>5</index>" in config, confirm_timeout_s))
        if self.refuse:
            raise ModelError("bridge s1", "edit and confirmed commit refused: operation-failed")

    def confirm(self, token: str) -> None:
        self.calls.append(("confirm", token))

    def discard(self) -> None:
        self.calls.append("discard")


def test_the_held_stream_gone_from_the_edge_is_removed_in_a_commit_confirmed_with_its_token() -> None:
    bridge = Bridge()
    plans = edge_plans()
    done = push_psfp(bridge, psfp_document("s1", "00-00-00-00-00-01", plans, PORTS, ROOMY), 7)  # type: ignore[arg-type]
    assert done.removed == [99] and done.streams == sorted(plan.handle for plan in plans)
    read, (_, token, removes_index_5, timeout_s), confirmed = bridge.calls
    assert read == "get-config" and removes_index_5 and timeout_s == 7 and confirmed == ("confirm", token)


def test_a_refused_edit_is_discarded_and_never_confirmed() -> None:
    bridge = Bridge(refuse=True)
    with pytest.raises(ModelError, match="refused"):
        push_psfp(bridge, psfp_document("s1", "00-00-00-00-00-01", [], PORTS, ROOMY))  # type: ignore[arg-type]
    assert bridge.calls[-1] == "discard" and not any(call[0] == "confirm" for call in bridge.calls)
