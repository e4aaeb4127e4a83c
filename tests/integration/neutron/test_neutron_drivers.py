"""srfabric behind a real OpenStack: Neutron 29 with networking-sfc 23 and the srfabric drivers
(``integrations/neutron``, in ``.venv-neutron``), Keystone 30 and a MariaDB of the stack's own, driven with the
``openstack`` client as an admin and as members of two projects; a real ``srfabric serve`` (no switches) receives
what the journal sends. Every process is started here and stopped by its pid."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from srfabric.errors import SrfabricError
from srfabric_tools.testbed.neutron_stack import NEUTRON_VENV, NeutronStack
from tests.unit.neutron.test_sender import TOKEN, Serve

pytestmark = pytest.mark.skipif(not (NEUTRON_VENV / "bin" / "python").exists(),
                                reason="needs .venv-neutron (make bootstrap)")


def until(condition: Callable[[], bool], what: str | Callable[[], str], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what() if callable(what) else what}: not within {timeout} s"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Serve, NeutronStack]]:
    folder = tmp_path_factory.mktemp("neutron")
    serve = Serve(folder)
    serve.start()
    try:
        with NeutronStack(folder / "stack", serve.url, TOKEN, stale_claim_s=3.0) as neutron:
            yield serve, neutron
    finally:
        serve.stop()


def held(serve: Serve, path: str) -> dict[str, dict[str, Any]]:
    from networking_srfabric.sender import http_call

    status, answer = http_call(serve.url, TOKEN)("GET", path, None)
    assert status == 200, answer
    [(_, items)] = answer.items()
    return {item["id"]: item for item in items if not item.get("srfabric:discovered")}


def function_ports(neutron: NeutronStack, cloud: str, network: str, device: str) -> dict[str, str]:
    """A function's two ports, made by ``cloud`` and bound by the compute service (as Nova binds a VM's ports): to
    a host, and to the fabric switch and port the function's interfaces are on."""
    ports = {side: neutron.openstack(cloud, "port", "create", f"{device}-{side}", "--network", network, "--device",
                                     device)["id"] for side in ("in", "out")}
    for side, number in (("in", 3), ("out", 4)):
        neutron.run("compute", "port", "set", "--host", "compute1", "--binding-profile", "switch=s1",
                    "--binding-profile", f"port={number}", ports[side])
    return ports


def test_neutron_changes_reach_srfabric_once_through_its_journal_and_ports_bind_to_the_fabric(stack) -> None:
    serve, neutron = stack
    neutron.openstack("admin", "network", "create", "fabric")
    neutron.openstack("admin", "subnet", "create", "fabric-v4", "--network", "fabric", "--subnet-range",
                      "10.0.0.0/24")
    ports = function_ports(neutron, "admin", "fabric", "fw")
    pair = neutron.openstack("admin", "sfc", "port", "pair", "create", "--ingress", ports["in"], "--egress",
                             ports["out"], "--service-function-parameters", "correlation=mpls", "fw")["id"]
    group = neutron.openstack("admin", "sfc", "port", "pair", "group", "create", "--port-pair", pair, "fws")["id"]
    until(lambda: group in held(serve, "/v2.0/sfc/port_pair_groups"), "the group in srfabric")
    assert set(ports.values()) <= set(held(serve, "/v2.0/ports"))
    assert held(serve, "/v2.0/sfc/port_pairs")[pair]["ingress"] == ports["in"]  # Neutron's ids, kept
    bound = neutron.openstack("admin", "port", "show", ports["in"])
    assert bound["binding_vif_type"] == "other" and bound["binding_vif_details"]["srfabric_switch"] == "s1"
    neutron.openstack("admin", "sfc", "port", "pair", "set", "--name", "firewall", pair)
    until(lambda: held(serve, "/v2.0/sfc/port_pairs")[pair]["name"] == "firewall", "the rename in srfabric")
    # srfabric away during a create: Neutron answers, the journal keeps the change, and it arrives once.
    serve.stop()
    spare = neutron.openstack("admin", "sfc", "port", "pair", "group", "create", "spare")["id"]
    serve.start()
    journal = "SELECT seqnum, object_type, operation, state, retry_count, reason FROM neutron.srfabric_journal"
    until(lambda: spare in held(serve, "/v2.0/sfc/port_pair_groups"),
          lambda: f"the group made while srfabric was away; the journal: {neutron.sql(journal)}")
    neutron.openstack("admin", "sfc", "port", "pair", "group", "delete", group)
    until(lambda: group not in held(serve, "/v2.0/sfc/port_pair_groups"), "the delete in srfabric")
    names = [g["name"] for g in held(serve, "/v2.0/sfc/port_pair_groups").values()]
    assert names == ["spare"]


def test_a_member_sees_and_chains_only_its_own_project_s_ports(stack) -> None:
    serve, neutron = stack
    neutron.openstack("alice", "network", "create", "net-a")
    neutron.openstack("alice", "subnet", "create", "sub-a", "--network", "net-a", "--subnet-range", "10.1.0.0/24")
    ports = function_ports(neutron, "alice", "net-a", "nat")
    assert neutron.openstack("bob", "port", "list") == []
    assert neutron.run("bob", "port", "show", ports["in"], check=False).returncode != 0
    with pytest.raises(SrfabricError, match="No Port found"):
        neutron.openstack("bob", "sfc", "port", "pair", "create", "--ingress", ports["in"], "--egress",
                          ports["out"], "stolen")
    mine = neutron.openstack("alice", "sfc", "port", "pair", "create", "--ingress", ports["in"], "--egress",
                             ports["out"], "--service-function-parameters", "correlation=mpls", "nat")["id"]
    assert neutron.openstack("bob", "sfc", "port", "pair", "list") == []
    assert mine in {p["ID"] for p in neutron.openstack("admin", "sfc", "port", "pair", "list")}
    until(lambda: mine in held(serve, "/v2.0/sfc/port_pairs"), "alice's pair in srfabric")
    assert held(serve, "/v2.0/sfc/port_pairs")[mine]["project_id"] == \
        neutron.openstack("alice", "sfc", "port", "pair", "show", mine)["Project"]


def test_full_sync_repairs_drift_on_either_side(stack) -> None:
    serve, neutron = stack
    from networking_srfabric.sender import http_call

    call = http_call(serve.url, TOKEN)
    groups = held(serve, "/v2.0/sfc/port_pair_groups")
    [spare] = [ident for ident, g in groups.items() if g["name"] == "spare"]
    assert call("DELETE", f"/v2.0/sfc/port_pair_groups/{spare}", None)[0] == 204  # lost on srfabric
    extra = call("POST", "/v2.0/sfc/port_pair_groups", {"port_pair_group": {"name": "by-hand"}})[1]
    [pair] = [ident for ident, p in held(serve, "/v2.0/sfc/port_pairs").items() if p["name"] == "nat"]
    call("PUT", f"/v2.0/sfc/port_pairs/{pair}", {"port_pair": {"name": "renamed-by-hand"}})

    def sync(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(neutron.python), "-m", "networking_srfabric.sync_command", "--config-file",
                               str(neutron.state / "neutron.conf"), "--os-cloud", "admin", *flags],
                              capture_output=True, text=True, timeout=120,
                              env={"OS_CLIENT_CONFIG_FILE": str(neutron.state / "clouds.yaml"), "PATH": "/usr/bin"})

    found = sync("--dry-run")
    assert found.returncode == 1, found.stderr
    assert set(found.stdout.splitlines()[:-1]) == {f"create port_pair_group {spare}", f"update port_pair {pair}",
                                                   f"delete port_pair_group {extra['port_pair_group']['id']}"}
    assert sync().returncode == 1
    until(lambda: sync("--dry-run").returncode == 0, lambda: f"repaired: {sync('--dry-run').stdout}", 30)
    assert held(serve, "/v2.0/sfc/port_pairs")[pair]["name"] == "nat"
    assert spare in held(serve, "/v2.0/sfc/port_pair_groups")


def test_the_stack_writes_no_file_outside_its_state_folder(stack) -> None:
    _, neutron = stack
    assert Path(neutron.started["clouds"]).parent == neutron.state


def test_neutron_s_api_killed_mid_send_loses_nothing_and_sends_nothing_twice(stack) -> None:
    """srfabric stopped (SIGSTOP: it takes connections and answers nothing) while the worker sends a row; the API is
    killed with the row in flight; once both are back the row is claimed again (its claim gone stale) and arrives
    once."""
    serve, neutron = stack
    assert serve.process is not None
    journal = "SELECT state FROM neutron.srfabric_journal WHERE object_uuid = '{}'"
    os.kill(serve.process.pid, signal.SIGSTOP)
    try:
        group = neutron.openstack("admin", "sfc", "port", "pair", "group", "create", "mid-send")["id"]
        until(lambda: "processing" in neutron.sql(journal.format(group)), "the row in flight")
        neutron.kill_api()
    finally:
        os.kill(serve.process.pid, signal.SIGCONT)
    neutron.restart_api()
    until(lambda: "completed" in neutron.sql(journal.format(group)),
          lambda: f"the row sent again: {neutron.sql(journal.format(group))}", 60)
    assert [g["name"] for g in held(serve, "/v2.0/sfc/port_pair_groups").values()].count("mid-send") == 1
    assert neutron.openstack("admin", "sfc", "port", "pair", "group", "show", group)["Name"] == "mid-send"


def test_serve_takes_keystone_tokens_itself_without_neutron_in_front(stack, tmp_path: Path) -> None:
    """``serve --keystone``: a second srfabric, with no Neutron in front, checks each token with the stack's
    Keystone. A member's token is its project's member (it makes ports there and sees no other project's), an
    admin's sees every project, a made-up token is a 401, and ``--token`` stays an admin's."""
    import json
    import urllib.error
    import urllib.request

    import yaml

    _, neutron = stack
    clouds = yaml.safe_load((neutron.state / "clouds.yaml").read_text())["clouds"]
    admin = clouds["admin"]["auth"]
    (tmp_path / "password").write_text(admin["password"])
    serve = Serve(tmp_path, ("--keystone", f"http://127.0.0.1:{neutron.keystone_port}/v3", "--keystone-user",
                             admin["username"], "--keystone-project", admin["project_name"],
                             "--keystone-password-file", str(tmp_path / "password")))
    serve.start()

    def call(token: str, method: str, path: str, body: object = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(serve.url + path, data, method=method,
                                         headers={"X-Auth-Token": token, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    try:
        issued = {name: json.loads(neutron.run(name, "token", "issue", "-f", "json").stdout)
                  for name in ("admin", "alice", "bob")}
        tokens = {name: token["id"] for name, token in issued.items()}
        alice_project = issued["alice"]["project_id"]
        status, made = call(tokens["alice"], "POST", "/v2.0/ports", {"port": {
            "name": "alice-vm", "mac_address": "02:00:00:00:0a:01", "fixed_ips": [{"ip_address": "10.9.0.1"}]}})
        assert status == 201, made
        assert made["port"]["project_id"] == alice_project  # Keystone's project, not one the body chose
        assert [p["name"] for p in call(tokens["bob"], "GET", "/v2.0/ports")[1]["ports"]] == []
        assert "alice-vm" in [p["name"] for p in call(tokens["admin"], "GET", "/v2.0/ports")[1]["ports"]]
        assert call(tokens["bob"], "GET", "/v2.0/srfabric/fabric")[0] == 403  # the operator's view: an admin's only
        assert call("not-a-keystone-token", "GET", "/v2.0/ports")[0] == 401
        assert call(TOKEN, "GET", "/v2.0/srfabric/fabric")[0] == 200  # the static token, without asking Keystone
    finally:
        serve.stop()
