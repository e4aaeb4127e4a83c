"""Two ``srfabric serve`` instances sharing one fabric on one PostgreSQL database (root): the leader, and a
second instance that claims the edge s1 (``--edges s1``) and is its MASTER while the leader is MASTER of s2
and s3. Chains made through the leader's API run from h1 on s1: their classifier entries on s1 can come only
from the second instance. SIGKILL it while traffic runs on one chain: the leader takes s1 (the take-over is
measured from the kill), s1 keeps every entry it held (none sent again), and no frame is lost.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from srfabric.cli.client import SfcClient
from srfabric.errors import SrfabricError
from srfabric_tools.bench.scale_shares import masters, wait_for
from srfabric_tools.bench.takeover import CHAIN_PORT, Traffic, entries_younger_than, wait_connected
from srfabric_tools.testbed.api_chains import create_chains, make_groups
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec, postgres_cluster

CHAINS = 20


@pytest.fixture
def shared() -> Iterator[tuple[ApiLab, ServeProcess]]:
    with postgres_cluster() as url, ServeProcess(url) as leader, \
            ServeProcess(url, extra_args=("--edges", "s1")) as second, \
            ApiLab(line_spec(4), leader, others=[second]) as lab:
        yield lab, second


def classifiers_on_s1(lab: ApiLab) -> int:
    return sum(1 for line in lab.dump_flows()["s1"] if "priority=200" in line)


def test_an_instance_masters_its_edges_and_the_leader_takes_them_when_it_dies(
        shared: tuple[ApiLab, ServeProcess]) -> None:
    lab, second = shared
    leader = lab.serve
    assert "leader (generation 1)" in leader.output(), leader.output()[-400:]
    assert "MASTER of its edges s1" in second.output(), second.output()[-400:]
    wait_connected(second, len(lab.spec.switches))
    wait_for(lambda: masters(second) == {"s1"} and masters(leader) == {"s2", "s3"}, "s1 moved to its claimant")
    with leader.client() as client:
        create_chains(client, lab, make_groups(client, lab), CHAINS, CHAIN_PORT)
        shares = client.get("/v2.0/srfabric/fabric")["fabric"]["shares"]
    assert shares == {"edges": [], "elsewhere": ["s1"]}
    # The leader cannot write s1 (SLAVE): the second instance read the new chains from the database.
    wait_for(lambda: classifiers_on_s1(lab) == CHAINS, "every chain's classifier on s1")
    try:
        with SfcClient(second.url, second.token) as reader:
            listed = len(reader.list("port_chains"))
    except SrfabricError as error:  # seen once in a loaded CI run, unexplained: the instance's log goes with it
        pytest.fail(f"{error}\n{second.output()[-3000:]}")
    assert listed == CHAINS
    before = lab.dump_flows()
    for serve in (leader, second):
        assert "Traceback" not in serve.output() and "sync failed" not in serve.output(), serve.output()[-2000:]

    traffic = Traffic(lab, 5.0, "shared")
    time.sleep(1.5)
    second.kill()
    killed = time.monotonic()
    took = wait_for(lambda: "s1" in masters(leader), "s1 taken by the leader")
    print(f"s1 taken {took:.3f} s after the kill")  # timed, not judged here (``bench scale`` judges it)
    time.sleep(1.0)  # a sync that would change anything has run by now
    assert lab.dump_flows()["s1"] == before["s1"]
    assert entries_younger_than(lab, time.monotonic() - killed) == 0  # nothing sent again
    missing, sent = traffic.missing()
    assert not missing, f"{len(missing)} of {sent} frames lost, numbers {missing[0]} to {missing[-1]}"
