"""`srfabric bench hostile --quick`, the hostile-input table in its quick form, with TLS on: every row holds (the
API answers an admin within 1 s, a real Open vSwitch bridge connects again over TLS and is taken, no other
bridge's entries are removed or replaced and no link changes), the attackers got nothing, and the files are
written. The counts are asserted; no time but the table's own 1 s bound."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from srfabric_tools.testbed.net import ovs_running

pytestmark = [pytest.mark.integration, pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd")]


def test_bench_hostile_quick(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "srfabric", "bench", "hostile", "--quick", "--json", "--out",
                          str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    rows = {row["attack"]: row for row in summary["table"]}
    assert [name for name, row in rows.items() if not row["holds"]] == []
    assert summary["rows"] == len(rows) >= 25 and summary["goals"]["every_row_holds"]
    for name in ("plaintext HELLO where TLS is required", "TLS without a client certificate",
                 "certificate of another CA"):
        assert "no message" in rows[name]["attacker_got"] or "TLS refused" in rows[name]["attacker_got"], name
    assert "closed by the controller" in rows["second certificate for a connected dpid"]["attacker_got"]
    assert rows["no token"]["attacker_got"].startswith("401")
    assert "show 404, update 404, delete 404; list holds it: False" in rows[
        "member of project B reads, lists, changes and deletes project A's ids"]["attacker_got"]
    assert rows["3 MB body"]["attacker_got"].startswith("413")
    assert "duplicated 0" in rows["concurrent creates"]["attacker_got"]
    control, forged = (rows["control: the same frame with h1's own source MAC (must reach h2)"],
                       rows["source MAC written as a mac-nibble path into v1"])
    assert "0 reached v1" in control["attacker_got"] and "50 reached h2" in control["attacker_got"]
    assert "0 reached v1" in forged["attacker_got"]
    assert summary["machine"]["commit"] and summary["command"].startswith("srfabric bench hostile")
    assert {p.name for p in Path(summary["folder"]).iterdir()} == {"run.log", "rows.csv", "summary.json", "table.md"}
