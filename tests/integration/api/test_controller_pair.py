"""Two ``srfabric serve`` instances on one PostgreSQL database (root): one leads, the other follows; the
switches connect to both. SIGKILL the leader while traffic runs on one of 100 chains: the follower takes
over, the data plane loses no frame, the API takes writes again, and every switch holds exactly the entries
it held before (none even sent again). ``srfabric bench failover`` times the take-over over many kills."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from srfabric.api.web.http11 import Connection
from srfabric_tools.bench.takeover import (
    CHAIN_PORT,
    CHAINS,
    Traffic,
    entries_younger_than,
    first_write,
    wait_connected,
    write_once,
)
from srfabric_tools.testbed.api_chains import create_chains, make_groups
from srfabric_tools.testbed.api_lab import ApiLab, ServeProcess, line_spec, postgres_cluster


@pytest.fixture
def pair() -> Iterator[tuple[ApiLab, ServeProcess]]:
    with postgres_cluster() as url, ServeProcess(url) as first, ServeProcess(url) as second, \
            ApiLab(line_spec(4), first, others=[second]) as lab:
        yield lab, second


def test_the_follower_takes_over_from_a_killed_leader(pair: tuple[ApiLab, ServeProcess]) -> None:
    lab, follower = pair
    leader = lab.serve
    assert "leader (generation 1)" in leader.output(), leader.output()[-400:]
    assert f"follower of {leader.url}" in follower.output(), follower.output()[-400:]
    with leader.client() as client:
        made = create_chains(client, lab, make_groups(client, lab), CHAINS, CHAIN_PORT)
    wait_connected(follower, len(lab.spec.switches))
    with follower.client() as reader:  # the follower serves reads from the database
        time.sleep(0.3)
        assert {c["id"] for c in reader.list("port_chains")} == set(made)
        fabric = reader.get("/v2.0/srfabric/fabric")["fabric"]
        assert fabric["leadership"] == {"leading": False, "generation": 1, "leader": leader.url}
    # A write sent to the follower: 307 to the leader (Location and the error's detail name it) ...
    raw = Connection("127.0.0.1", follower.port, 10)
    response = raw.request("POST", "/v2.0/sfc/flow_classifiers",
                           {"X-Auth-Token": follower.token, "Content-Type": "application/json"},
                           json.dumps({"flow_classifier": {"protocol": "udp"}}).encode())
    raw.close()
    assert response.status == 307 and json.loads(response.body)["NeutronError"]["detail"] == leader.url
    with follower.client() as client:  # ... which srfabric's client follows
        write_once(client, 40000)
        assert client.base_url == leader.url
    before = lab.dump_flows()
    assert sum(1 for line in before["s1"] if "priority=200" in line) == CHAINS

    traffic = Traffic(lab, 6.0, "pair")
    time.sleep(2.0)
    leader.kill()
    killed = time.monotonic()
    took = first_write(follower.url, follower.token, 40001, killed)
    print(f"writes taken again {took:.2f} s after the kill")
    with follower.client() as client:
        fabric = client.get("/v2.0/srfabric/fabric")["fabric"]
    assert fabric["leadership"] == {"leading": True, "generation": 2, "leader": follower.url}
    assert all(s["connected"] for s in fabric["switches"])
    time.sleep(1.0)  # a sync that would change anything has run by now
    after = lab.dump_flows()
    for switch in before:
        assert after[switch] == before[switch], (switch, set(before[switch]) ^ set(after[switch]))
    # Not even sent again: every entry is older than the take-over (a re-added entry's age starts at 0).
    assert entries_younger_than(lab, time.monotonic() - killed) == 0
    missing, sent = traffic.missing()  # frame n left 1 ms after frame n-1; the kill came about 2,000 in
    assert not missing, f"{len(missing)} of {sent} frames lost, numbers {missing[0]} to {missing[-1]}"


def test_a_leader_whose_generation_was_taken_writes_nothing_and_stops() -> None:
    import psycopg

    from srfabric.cli.client import ApiFailure

    with postgres_cluster() as url, ServeProcess(url) as serve:
        with serve.client() as client:
            client.create("ports", {"name": "before"})
            # As a newer leader would, unnoticed by this one: the row says another generation leads now.
            with psycopg.connect(url, autocommit=True) as db:
                db.execute("UPDATE leader SET generation = generation + 1, url = 'http://elsewhere:9696'")
            with pytest.raises(ApiFailure) as refused:
                client.create("ports", {"name": "after"})
        assert refused.value.status == 503 and refused.value.kind == "NotLeader"
        assert serve.process is not None and serve.process.wait(10) != 0
        assert "no longer leading" in serve.output()
        with psycopg.connect(url) as db:
            names = {row[0] for row in db.execute("SELECT name FROM ports")}
        assert "before" in names and "after" not in names
