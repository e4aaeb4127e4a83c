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

from srfabric.tsn.model.network import Network
from srfabric.tsn.protect.cbs_bound import analyse
from srfabric.tsn.protect.cbs_classes import ClassStream, PortWindows
from srfabric.tsn.protect.cbs_settings import cbs_commands, cbsa_document
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
    [class_a, class_b] = cbs_commands(share, "s1-eth2", {"A": "100:4", "B": "100:3"})
    words = dict(zip(class_a.split()[8::2], class_a.split()[9::2], strict=False))
    assert class_a.startswith("tc qdisc replace dev s1-eth2 parent 100:4 cbs") and "parent 100:3" in class_b
    assert int(words["idleslope"]) * 1000 >= share.idle_slope_bps["A"] > share.reserved_bps["A"]
    assert int(words["sendslope"]) == int(words["idleslope"]) - 1_000_000
    assert int(words["hicredit"]) * 8 >= share.hi_credit_bits["A"] and int(words["locredit"]) * 8 <= \
        share.lo_credit_bits["A"]
