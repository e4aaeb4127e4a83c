"""``srfabric bench hostile``: the hostile-input table. Everything runs with TLS on: OpenFlow with mutual
certificates (``--openflow-tls``), the API over HTTPS (``--api-tls``) with tokens of projects and roles
(``--tokens``), on a Mininet fabric of real Open vSwitch bridges (h1 - s1 - s2 - s3 - h2, four functions, three
chains) and a spare bridge ``s9`` that is disconnected and connected again after every row.

Each row is an attack (``hostile_openflow``, ``hostile_rest``, ``hostile_dataplane``) and records what the
attacker got; then, whatever it got, the row holds only if the API answers an admin's fabric view within 1 s,
the spare bridge (a real switch) connects again over TLS and is taken, every other bridge's flow table and
groups are as they were before the first row, and the controller knows the same links.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from srfabric.cli.client import CACERT_ENV, SfcClient
from srfabric.errors import SrfabricError
from srfabric.security.pki import make_ca, make_certificate
from srfabric_tools.bench import hostile_dataplane, hostile_openflow, hostile_rest
from srfabric_tools.bench.output import machine, provenance, run_folder, write_csv, write_json
from srfabric_tools.testbed.api_chains import create_chains, make_groups
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec

SPARE, SPARE_DPID = "s9", 0x1FF
API_GOAL_S = 1.0


def certificates(pki: Path, victim: int) -> None:
    """The fabric's CA and the controller's certificate; the intruder's (a dpid of its own), a second one for
    the victim's dpid, and a stranger's from another CA."""
    ca = make_ca(pki)
    make_certificate(pki, ca, "controller")
    make_certificate(pki, ca, "intruder", dpids=[hostile_openflow.INTRUDER_DPID])
    make_certificate(pki, ca, "replacement", dpids=[victim])
    other = pki / "other-ca"
    make_certificate(other, make_ca(other, "not the fabric's CA"), "stranger", dpids=[victim])


def tokens(folder: Path) -> dict[str, str]:
    """Alice (project-a) and Bob (project-b), members; their tokens, and ``tokens.json`` for ``--tokens``."""
    made = {name: hashlib.sha256(f"{name}-{os.getpid()}-{time.time()}".encode()).hexdigest()[:32]
            for name in ("alice", "bob")}
    (folder / "tokens.json").write_text(json.dumps([
        {"sha256": hashlib.sha256(made["alice"].encode()).hexdigest(), "project": "project-a", "role": "member"},
        {"sha256": hashlib.sha256(made["bob"].encode()).hexdigest(), "project": "project-b", "role": "member"}]))
    return made


class Checks:
    """What must hold after every row, against what held before the first."""

    def __init__(self, lab: ApiLab) -> None:
        self.lab = lab
        self.tables: dict[str, list[str]] = {}
        self.links: list[str] = []

    def before(self) -> None:
        time.sleep(0.5)  # the previous row's syncs have run
        self.tables, self.links = self.tables_now(), self.links_now()

    def tables_now(self) -> dict[str, list[str]]:
        return {name: table for name, table in self.lab.dump_flows().items() if name != SPARE}

    def links_now(self) -> list[str]:
        with self.lab.serve.client() as client:
            links = client.get("/v2.0/srfabric/fabric")["fabric"]["links"]
        return sorted(json.dumps(link, sort_keys=True) for link in links)

    def api_seconds(self) -> float:
        begin = time.monotonic()
        try:
            with SfcClient(self.lab.serve.url, self.lab.serve.token, timeout=API_GOAL_S * 5) as client:
                client.get("/v2.0/srfabric/fabric")
        except SrfabricError:
            return float("inf")
        return time.monotonic() - begin

    def spare_reconnects(self, timeout: float = 15.0) -> float:
        """Seconds for the spare bridge, its controller removed and set again, to be taken (inf: it was not)."""
        vsctl = ["ovs-vsctl", "--timeout=10"]
        target = f"ssl:127.0.0.1:{self.lab.serve.openflow_port}"
        subprocess.run([*vsctl, "del-controller", SPARE], check=True, capture_output=True)
        self.wait_spare(False, timeout)
        begin = time.monotonic()
        subprocess.run([*vsctl, "set-controller", SPARE, target], check=True, capture_output=True)
        if not self.wait_spare(True, timeout):
            return float("inf")
        return time.monotonic() - begin

    def wait_spare(self, connected: bool, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.lab.serve.client() as client:
            while time.monotonic() < deadline:
                switches = client.get("/v2.0/srfabric/fabric")["fabric"]["switches"]
                if any(s["dpid"] == SPARE_DPID and s["connected"] == connected for s in switches):
                    return True
                time.sleep(0.05)
        return False

    def after(self, admitted: bool) -> dict[str, Any]:
        """``admitted``: the attacker was a switch with a certificate of its own, whose hosts are learned as any
        switch's are; it may add entries for them, but not remove or replace any other."""
        time.sleep(0.5)  # a sync the row caused has run by now
        api_s = self.api_seconds()
        reconnect_s = self.spare_reconnects()
        now = self.tables_now()
        changed = {name: (len(set(table) - set(self.tables[name])), len(set(self.tables[name]) - set(table)))
                   for name, table in now.items() if table != self.tables.get(name)}
        removed = any(gone for _, gone in changed.values())
        tables = not changed or (admitted and not removed)
        links = self.links_now() == self.links
        return {"api_answer_ms": round(api_s * 1000, 1), "real_switch_connects_s": round(reconnect_s, 3),
                "tables_unchanged": not changed, "entries_removed": removed, "links_unchanged": links,
                "entries_added_removed": "; ".join(f"{name} +{added} -{gone}" for name, (added, gone) in
                                                   sorted(changed.items())),
                "holds": api_s < API_GOAL_S and reconnect_s != float("inf") and tables and links}


def prepare(lab: ApiLab, alice: str) -> str:
    """Three chains (an admin's), and a port of Alice's; its id."""
    with lab.serve.client() as client:
        create_chains(client, lab, make_groups(client, lab, copies=1), 3, 31000)
    with SfcClient(lab.serve.url, alice) as client:
        return str(client.create("ports", {"name": "alice-port"})["id"])


def run_rows(lab: ApiLab, pki: Path, people: dict[str, str], scale: float, say: Callable[[str], None],
             only: str | None = None) -> list[dict[str, Any]]:
    alice_port = prepare(lab, people["alice"])
    time.sleep(1.0)
    checks = Checks(lab)
    victim = lab.spec.switches["s1"]
    link = next(link for link in lab.spec.links if "s1" in (link.a, link.b))
    target = hostile_openflow.Target(lab.serve.openflow_port, pki, victim.dpid,
                                     link.a_port if link.a == "s1" else link.b_port, scale)
    api = hostile_rest.Api(lab.serve.url, pki / "ca-cert.pem", people["alice"], people["bob"], alice_port, scale)
    attacks: list[tuple[str, str, Callable[[], str]]] = [
        *(("openflow", name, lambda row=row: asyncio.run(row(target))) for name, row in hostile_openflow.ROWS.items()),
        *(("rest", name, lambda row=row: asyncio.run(row(api))) for name, row in hostile_rest.ROWS.items()),
        *(("data plane", name, row) for name, row in hostile_dataplane.rows(lab).items())]
    rows = []
    for surface, name, attack in attacks:
        if only is not None and only not in name:
            continue
        checks.before()
        try:
            got = attack()
        except Exception as error:  # noqa: BLE001 - the row still records it, and what held afterwards
            got = f"the attack could not be carried out: {type(error).__name__}: {error}"
        row = {"surface": surface, "attack": name, "attacker_got": got,
               **checks.after(name in hostile_openflow.ADMITTED)}
        say(f"{'holds' if row['holds'] else 'FAILS'}  {surface}: {name}: {got} (API {row['api_answer_ms']} ms, "
            f"a real switch taken in {row['real_switch_connects_s']} s, tables unchanged {row['tables_unchanged']})")
        rows.append(row)
    return rows


def run_hostile(quick: bool, out: str, say: Callable[[str], None] = print, only: str | None = None
                ) -> tuple[dict[str, Any], Path]:
    names = [*hostile_openflow.ROWS, *hostile_rest.ROWS, *hostile_dataplane.ROW_NAMES]
    if only is not None and not any(only in name for name in names):
        raise SrfabricError("--only", f"no row's attack names {only!r}; the rows: {'; '.join(names)}")
    measured_on = machine()
    spec = line_spec(4)
    spec.add_switch(SPARE, "edge", dpid=SPARE_DPID)
    old_cacert = os.environ.get(CACERT_ENV)
    with tempfile.TemporaryDirectory(prefix="srfabric-hostile-") as scratch:
        pki = Path(scratch) / "pki"
        certificates(pki, spec.switches["s1"].dpid)
        people = tokens(Path(scratch))
        os.environ[CACERT_ENV] = str(pki / "ca-cert.pem")  # the API's certificate is checked against it
        serve = ServeProcess(f"sqlite:///{scratch}/api.db", tls=pki,
                             extra_args=("--api-tls", str(pki), "--tokens", str(Path(scratch) / "tokens.json")))
        try:
            with serve, ApiLab(spec, serve) as lab:
                rows = run_rows(lab, pki, people, 0.1 if quick else 1.0, say, only)
        finally:
            os.environ.pop(CACERT_ENV)
            if old_cacert is not None:
                os.environ[CACERT_ENV] = old_cacert
    summary = {"rows": len(rows), "rows_holding": sum(r["holds"] for r in rows), "quick": quick,
               "api_answer_ms_max": max(r["api_answer_ms"] for r in rows),
               "real_switch_connects_s_max": max(r["real_switch_connects_s"] for r in rows),
               "tls": {"openflow": "mutual certificates", "api": "https"}, "table": rows,
               **provenance(measured_on, f"srfabric bench hostile{' --quick' if quick else ''}")}
    summary["goals"] = {"every_row_holds": summary["rows_holding"] == summary["rows"]}
    folder = run_folder(out, "hostile")
    write_csv(folder / "rows.csv", [row | {"commit": measured_on["commit"]} for row in rows])
    write_json(folder / "summary.json", summary)
    (folder / "table.md").write_text(markdown(rows))
    return summary, folder


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| surface | attack | what the attacker got | API answer | a real switch taken | tables | holds |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['surface']} | {r['attack']} | {r['attacker_got'].replace('|', '/')} | "
                     f"{r['api_answer_ms']} ms | {r['real_switch_connects_s']} s | "
                     f"{tables_word(r)} | "
                     f"{'yes' if r['holds'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def tables_word(row: dict[str, Any]) -> str:
    if not row["links_unchanged"]:
        return "links CHANGED"
    if row["tables_unchanged"]:
        return "unchanged"
    what = "CHANGED" if row["entries_removed"] else "entries added, none removed"
    return f"{what} ({row['entries_added_removed']})"


def print_hostile(summary: dict[str, Any]) -> None:
    print(markdown(summary["table"]), end="")
    print(f"{summary['rows_holding']} of {summary['rows']} rows hold (TLS on); the API answered within "
          f"{summary['api_answer_ms_max']} ms after every row")
