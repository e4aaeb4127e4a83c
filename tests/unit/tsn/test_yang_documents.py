"""Every 802.1Qcw document srfabric emits passes ``yanglint`` against the pinned IEEE and IETF modules
(``../shared/yang``), in the tree a bridge holds: the gate parameter tables srfabric sends beside the capability
leaves the bridge reports (the published ``must`` statements check the lists against them). A list over a
capability is refused by yanglint, and srfabric's own check names the same leaf before anything is sent."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from srfabric.model.topo import tsn_fig1
from srfabric.tsn.gates.capabilities import PortCapabilities, over
from srfabric.tsn.gates.gcl import GateEntry, PortGcl
from srfabric.tsn.gates.render import to_yang
from srfabric.tsn.model.network import Stream
from srfabric.tsn.runtime.live import LivePlanner, network_from_fabric

YANG = Path(__file__).resolve().parents[3].parent / "shared" / "yang"
MODULES = ("ietf-interfaces@2018-02-20", "iana-if-type@2014-05-08", "ieee802-dot1q-bridge@2023-10-26",
           "ieee802-dot1q-sched@2023-10-22", "ieee802-dot1q-sched-bridge@2023-10-26")
ROOMY = PortCapabilities(list_max=64, cycle_max=(1, 100), interval_max_ns=10_000_000, tick_tenths_ns=10)


def yanglint(document: dict[str, Any] | str, tmp_path: Path, kind: str = "config"
             ) -> subprocess.CompletedProcess[str]:
    """``document`` (RFC 7951 JSON as a dict, or NETCONF XML as text) through yanglint against the pinned modules."""
    if not YANG.is_dir():
        pytest.fail(f"the pinned YANG modules are not at {YANG} (shared/yang beside the checkout)")
    tool = shutil.which("yanglint")
    if tool is None:
        pytest.fail("yanglint is missing: the bootstrap installs it (Debian's libyang2-tools)")
    path = tmp_path / ("document.xml" if isinstance(document, str) else "document.json")
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return subprocess.run([tool, "-p", str(YANG), "-t", kind, *(str(YANG / f"{m}.yang") for m in MODULES),
                           str(path)], capture_output=True, text=True, timeout=60)


def with_capabilities(document: dict[str, Any], caps: PortCapabilities) -> dict[str, Any]:
    """The tree a bridge holds after the edit: each port's table beside the capability leaves it reports."""
    for interface in document["ietf-interfaces:interfaces"]["interface"]:
        table = interface["ieee802-dot1q-bridge:bridge-port"]["ieee802-dot1q-sched-bridge:gate-parameter-table"]
        table.update(caps.to_yang())
    return document


def live_gcls() -> list[PortGcl]:
    planner = LivePlanner(network_from_fabric(tsn_fig1().to_fabric()))
    for n, (src, dst) in enumerate((("h1", "h3"), ("h2", "h4"), ("h1", "h4"))):
        planner.admit(Stream(f"s{n}", src, dst, period_ns=1_000_000, size_bytes=200))
    return planner.gcls(base_time_ns=1_700_000_000_123_456_789)


def test_the_live_planners_lists_validate_in_the_bridges_tree(tmp_path: Path) -> None:
    gcls = live_gcls()
    assert gcls and all(over(gcl, ROOMY) is None for gcl in gcls)
    done = yanglint(with_capabilities(to_yang(gcls), ROOMY), tmp_path)
    assert done.returncode == 0 and "err" not in done.stderr, done.stderr


def test_the_edit_alone_validates_as_an_edit(tmp_path: Path) -> None:
    done = yanglint(to_yang(live_gcls()), tmp_path, kind="edit")
    assert done.returncode == 0 and "err" not in done.stderr, done.stderr


def test_a_list_over_a_ports_capability_is_refused_by_yanglint_and_named_by_srfabric_first(tmp_path: Path) -> None:
    small = PortCapabilities(list_max=2, cycle_max=(1, 100), interval_max_ns=10_000_000, tick_tenths_ns=10)
    gcl = PortGcl("s1", "s2", "s1-eth3", 1_000_000, 0, [GateEntry(2, 27_036), GateEntry(1, 960_000),
                                                         GateEntry(0, 12_964)])
    assert over(gcl, small) == "supported-list-max: 3 gate control entries, over the 2 the port supports"
    done = yanglint(with_capabilities(to_yang([gcl]), small), tmp_path)
    assert "must not be greater" in done.stderr and "supported-list-max" in done.stderr
