"""The credit-based shapers as a bridge is told them: the ``ieee802-dot1q-cbsa-bridge`` table passes ``yanglint``
against the pinned modules (and a table the module forbids does not), and Linux's ``cbs`` gets the slopes and
credits the bound counted on, rounded the safe way."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric.tsn.model.network import Network
from srfabric.tsn.protect.cbs_bound import analyse
from srfabric.tsn.protect.cbs_classes import ClassStream, PortWindows
from srfabric.tsn.protect.cbs_settings import cbsa_document, shaped_port, shapers_of
from tests.unit.tsn.test_yang_documents import YANG

MODULES = ("ietf-interfaces@2018-02-20", "iana-if-type@2014-05-08", "ieee802-dot1q-bridge@2023-10-26",
           "ieee802-dot1q-cbsa@2024-08-07", "ieee802-dot1q-cbsa-bridge@2024-08-07")
NET = Network.build([("h1", "host"), ("s1", "switch"), ("h2", "host")], [("h1", "s1"), ("s1", "h2")])
STREAMS = [ClassStream("cam", "A", ("h1", "s1", "h2"), 125_000, 200),
           ClassStream("mic", "B", ("h1", "s1", "h2"), 250_000, 100)]


def yanglint(document: dict[str, Any], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("yanglint")
    if tool is None or not YANG.is_dir():
        pytest.fail("yanglint (the bootstrap installs it) and the pinned modules (../shared/yang) are needed")
    path = tmp_path / "cbsa.json"
    path.write_text(json.dumps(document))
    return subprocess.run([tool, "-p", str(YANG), "-F", "ieee802-dot1q-cbsa-bridge:credit-based-shaper-algorithm",
                           "-t", "config", *(str(YANG / f"{m}.yang") for m in MODULES), str(path)],
                          capture_output=True, text=True, timeout=60)


def test_the_parameter_table_validates_and_a_forbidden_one_does_not(tmp_path: Path) -> None:
    analysis = analyse(NET, STREAMS, {("s1", "h2"): PortWindows(1_000_000, 100_000, 1)})
    document = cbsa_document({"s1-eth2": analysis.ports[("s1", "h2")], "h1-eth1": analysis.ports[("h1", "s1")]})
    checked = yanglint(document, tmp_path)
    assert checked.returncode == 0, checked.stderr
    rows = document["ietf-interfaces:interfaces"]["interface"][1]["ieee802-dot1q-bridge:bridge-port"][
        "ieee802-dot1q-cbsa-bridge:cbsa"]["cbsa-parameter-table"]
    share = analysis.ports[("s1", "h2")]
    given = {row["traffic-class"]: int(row["admin-idle-slope"]) for row in rows}
    # The bridge scales what it is given by its cycle over its gate's open time (guard bands in): back to at least
    # the slope the bound assumes, which is above the reserved rate.
    for cls, traffic_class in (("A", 3), ("B", 2)):
        assert given[traffic_class] * 1_000_000 / 900_000 >= share.idle_slope_bps[cls] > share.reserved_bps[cls]
    rows[0]["traffic-class"] = 8  # traffic classes are 0..7
    refused = yanglint(document, tmp_path)
    assert refused.returncode != 0 and "traffic-class" in refused.stderr, refused.stderr


def test_linux_gets_the_slope_scaled_to_the_open_time_and_credits_rounded_outward() -> None:
    share = analyse(NET, STREAMS, {("s1", "h2"): PortWindows(1_000_000, 200_000, 1)}).ports[("s1", "h2")]
    class_a, class_b = shapers_of(share)
    assert (class_a.priority, class_b.priority) == (3, 2)
    assert class_a.idle_kbit * 1000 >= share.idle_slope_bps["A"] > share.reserved_bps["A"]
    assert class_a.send_kbit == class_a.idle_kbit - 1_000_000
    assert class_a.hi_bytes * 8 >= share.hi_credit_bits["A"] and class_a.lo_bytes * 8 <= share.lo_credit_bits["A"]


def test_the_classes_share_best_efforts_gate_and_are_ranked_above_it_under_taprio() -> None:
    share = analyse(NET, STREAMS, {("s1", "h2"): PortWindows(1_000_000, 200_000, 1)}).ports[("s1", "h2")]
    gcl = PortGcl("s1", "h2", "s1-eth2", 1_000_000, 0, [GateEntry(2, 200_000), GateEntry(1, 800_000)])
    taprio, prio, filter_a, cbs_a, filter_b, cbs_b, taprio_again = shaped_port(gcl, share)
    assert taprio_again == taprio  # the grafts cancel taprio's timer; sent again, it restarts
    assert " num_tc 2 map 0 0 0 0 0 0 0 1 " in taprio and "sched-entry S 02 200000 sched-entry S 01 800000" in taprio
    assert "parent 100:1 handle 10: prio bands 3" in prio  # under best effort's queue
    assert "meta(priority eq 65539)' classid 10:1" in filter_a and "meta(priority eq 65538)' classid 10:2" in filter_b
    assert "parent 10:1 cbs idleslope" in cbs_a and "parent 10:2 cbs idleslope" in cbs_b
