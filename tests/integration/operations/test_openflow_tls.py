"""OpenFlow over TLS between real Open vSwitch and a real ``srfabric serve --openflow-tls``: a bridge whose
daemon's certificate names its dpid is taken; a bridge whose dpid the certificate does not name is refused and
counted. Open vSwitch has one certificate per daemon (``ovs-vsctl set-ssl``); it is removed afterwards, with the
bridges, by name."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from srfabric.security.pki import make_ca, make_certificate
from srfabric_tools.testbed.api_lab import ServeProcess
from srfabric_tools.testbed.net import ovs_running

pytestmark = pytest.mark.skipif(not ovs_running(), reason="needs ovs-vswitchd (make bootstrap)")
BRIDGES = {"srftls1": 0x1101, "srftls2": 0x1102}


def vsctl(*words: str) -> None:
    subprocess.run(["ovs-vsctl", "--timeout=10", *words], check=True, capture_output=True)


@pytest.fixture
def pki(tmp_path: Path) -> Iterator[Path]:
    ca = make_ca(tmp_path)
    make_certificate(tmp_path, ca, "controller")
    ovs = make_certificate(tmp_path, ca, "ovs", dpids=[BRIDGES["srftls1"]])  # not srftls2's
    vsctl("set-ssl", str(ovs.key), str(ovs.cert), str(ca.cert))
    try:
        yield tmp_path
    finally:
        for bridge in BRIDGES:
            subprocess.run(["ovs-vsctl", "--timeout=10", "--if-exists", "del-br", bridge], capture_output=True)
        subprocess.run(["ovs-vsctl", "--timeout=10", "del-ssl"], capture_output=True)


def test_ovs_over_tls_is_taken_only_for_the_dpid_its_certificate_names(pki: Path) -> None:
    with ServeProcess(f"sqlite:///{pki}/api.db", tls=pki) as serve:
        for bridge, dpid in BRIDGES.items():
            vsctl("--may-exist", "add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev",
                  f"other-config:datapath-id={dpid:016x}", "protocols=OpenFlow13", "--", "set-controller", bridge,
                  f"ssl:127.0.0.1:{serve.openflow_port}")
        deadline, fabric = time.monotonic() + 30, {}
        with serve.client() as client:
            while time.monotonic() < deadline:
                fabric = client.get("/v2.0/srfabric/fabric")["fabric"]
                if any(s["connected"] for s in fabric["switches"]) and "identity" in serve.output():
                    break
                time.sleep(0.5)
        connected = sorted(s["dpid"] for s in fabric["switches"] if s["connected"])
        assert connected == [BRIDGES["srftls1"]], (connected, serve.output()[-2000:])
        assert f"claims dpid {BRIDGES['srftls2']:#x}, but its certificate (CN=ovs)" in serve.output()


def listening_bridge(bridge: str, dpid: int) -> int:
    """``bridge`` listening for its controller over TLS (``pssl:``, type=primary) on a free port; returns it."""
    from srfabric_tools.testbed.api_lab import free_port
    from srfabric_tools.testbed.listening import listen_on

    port = free_port()
    vsctl("--may-exist", "add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev",
          f"other-config:datapath-id={dpid:016x}", "protocols=OpenFlow13")
    listen_on(bridge, port, tls=True)
    return port


def test_a_dialing_controller_takes_listening_bridges_by_their_certificates_and_again_after_a_restart(
        tmp_path: Path) -> None:
    ca = make_ca(tmp_path)
    make_certificate(tmp_path, ca, "controller")
    ovs = make_certificate(tmp_path, ca, "ovs", dpids=[BRIDGES["srftls1"]], listens=True)  # not srftls2's
    vsctl("set-ssl", str(ovs.key), str(ovs.cert), str(ca.cert))
    try:
        ports = {bridge: listening_bridge(bridge, dpid) for bridge, dpid in BRIDGES.items()}
        dials = tuple(word for port in ports.values() for word in ("--dial", f"127.0.0.1:{port}"))
        with ServeProcess(f"sqlite:///{tmp_path}/api.db", tls=tmp_path, extra_args=dials) as serve:
            for attempt in ("first start", "restart"):
                if attempt == "restart":
                    serve.stop()
                    serve.start()
                deadline, connected = time.monotonic() + 30, []
                with serve.client() as client:
                    while time.monotonic() < deadline:
                        found = client.get("/v2.0/srfabric/fabric")["fabric"]["switches"]
                        connected = sorted(s["dpid"] for s in found if s["connected"])
                        if connected and "identity" in serve.output():
                            break
                        time.sleep(0.2)
                assert connected == [BRIDGES["srftls1"]], (attempt, connected, serve.output()[-2000:])
            assert f"claims dpid {BRIDGES['srftls2']:#x}, but its certificate (CN=ovs)" in serve.output()
    finally:
        for bridge in BRIDGES:
            subprocess.run(["ovs-vsctl", "--timeout=10", "--if-exists", "del-br", bridge], capture_output=True)
        subprocess.run(["ovs-vsctl", "--timeout=10", "del-ssl"], capture_output=True)
