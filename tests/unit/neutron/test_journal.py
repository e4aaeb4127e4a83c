"""The Neutron driver's journal on a real database (SQLite here; MariaDB inside Neutron): rows written in the
change's own transaction, sent strictly in order, each exactly once to an idempotent receiver, through an
outage, a worker killed mid-send, and two workers sharing the table."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine

from networking_srfabric.full_sync import repairs
from networking_srfabric.journal import DONE, JOURNAL_METADATA, REJECTED, RETRY, Entry, Journal, record


class Srfabric:
    """A receiver that applies each change once, by Neutron's id (as srfabric's API does for the driver), and
    can be down."""

    def __init__(self) -> None:
        self.up = True
        self.applied: list[tuple[str, str]] = []  # (operation, id), in the order they took effect
        self.held: dict[str, dict[str, object]] = {}
        self.received = 0

    def send(self, entry: Entry) -> tuple[str, str]:
        if not self.up:
            return RETRY, "connection refused"
        self.received += 1
        if entry.data.get("refuse"):
            return REJECTED, "port_pairs: refused by srfabric"
        if entry.operation == "delete":
            if self.held.pop(entry.object_uuid, None) is not None:
                self.applied.append(("delete", entry.object_uuid))
        elif self.held.get(entry.object_uuid) != entry.data:
            self.held[entry.object_uuid] = entry.data
            self.applied.append((entry.operation, entry.object_uuid))
        return DONE, ""


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = create_engine(f"sqlite:///{tmp_path}/neutron.db")
    JOURNAL_METADATA.create_all(engine)
    return engine


def changes(engine: Engine, count: int, start: int = 0) -> list[str]:
    ids = [f"pp-{index}" for index in range(start, start + count)]
    for ident in ids:
        with engine.begin() as db:  # one Neutron transaction per change
            record(db, "port_pair", ident, "create", {"id": ident, "ingress": f"{ident}-in"})
    return ids


def test_a_change_neutron_rolls_back_leaves_no_row(engine: Engine) -> None:
    with pytest.raises(RuntimeError), engine.begin() as db:
        record(db, "port_pair", "gone", "create", {"id": "gone"})
        raise RuntimeError("precommit refused it")
    changes(engine, 1)
    receiver = Srfabric()
    assert Journal(engine, receiver.send, clock=lambda: 0.0).run_once() == 1
    assert receiver.applied == [("create", "pp-0")]


def test_twenty_changes_made_while_srfabric_is_down_for_60_s_all_arrive_once_in_order(engine: Engine) -> None:
    now = [0.0]
    receiver = Srfabric()
    journal = Journal(engine, receiver.send, clock=lambda: now[0], backoff_max_s=8.0)
    receiver.up = False
    made = []
    tries = 0
    while now[0] < 60.0:  # a change every 3 s; the worker runs whenever its backoff allows
        made += changes(engine, 1, start=len(made))
        if journal.wait_s() == 0.0:
            journal.run_once()
            tries += 1
        now[0] += 3.0
    assert len(made) == 20 and receiver.applied == [] and tries < 20  # backed off, not hammering
    receiver.up = True
    now[0] += 8.0
    assert journal.run_once() == 20
    assert receiver.applied == [("create", ident) for ident in made]
    assert journal.counts() == {"completed": 20}


def test_a_worker_killed_mid_send_is_taken_over_and_the_change_arrives_once(engine: Engine) -> None:
    made = changes(engine, 3)
    now = [0.0]
    receiver = Srfabric()

    def dies_after_sending(entry: Entry) -> tuple[str, str]:
        receiver.send(entry)
        raise SystemExit("killed before it could mark the row done")

    with pytest.raises(SystemExit):
        Journal(engine, dies_after_sending, clock=lambda: now[0], stale_s=30.0).run_once()
    other = Journal(engine, receiver.send, clock=lambda: now[0], stale_s=30.0)
    assert other.run_once() == 0 and other.wait_s() == 30.0  # the claim is fresh: nothing overtakes it
    now[0] = 31.0
    assert other.run_once() == 3
    assert receiver.received == 4 and receiver.applied == [("create", ident) for ident in made]


def test_two_workers_on_one_table_send_each_row_once_in_order(engine: Engine) -> None:
    made = changes(engine, 10)
    receiver = Srfabric()
    first, second = (Journal(engine, receiver.send, clock=lambda: 0.0) for _ in range(2))
    done = 0
    while done < 10:
        done += first.run_once(limit=1) + second.run_once(limit=2)
    assert receiver.received == 10 and receiver.applied == [("create", ident) for ident in made]


def test_a_refused_change_is_kept_with_its_reason_and_the_rest_go_on(engine: Engine) -> None:
    changes(engine, 1)
    with engine.begin() as db:
        record(db, "port_pair", "bad", "create", {"id": "bad", "refuse": True})
    changes(engine, 1, start=1)
    receiver = Srfabric()
    journal = Journal(engine, receiver.send, clock=lambda: 0.0)
    assert journal.run_once() == 2
    assert journal.failed() == [(2, "port_pair", "bad", "port_pairs: refused by srfabric")]
    assert receiver.applied == [("create", "pp-0"), ("create", "pp-1")]


def test_an_unknown_operation_is_refused_by_name(engine: Engine) -> None:
    with pytest.raises(ValueError, match="operation: 'rename' is not one of create, update, delete"), \
            engine.begin() as db:
        record(db, "port_pair", "x", "rename", {})


def test_full_sync_deletes_children_first_then_creates_parents_first() -> None:
    neutron = {"ports": {"p1": {"mac": "a"}}, "port_pairs": {"pp": {"ingress": "p1"}},
               "port_chains": {"c": {"groups": ["g"]}}, "port_pair_groups": {"g": {"pairs": ["pp"]}}}
    srfabric = {"ports": {"p1": {"mac": "a"}, "old": {"mac": "b"}}, "port_chains": {"stale": {"groups": []}}}
    assert [(op, kind, ident) for op, kind, ident, _ in repairs(neutron, srfabric)] == [
        ("delete", "port_chains", "stale"), ("delete", "ports", "old"),
        ("create", "port_pairs", "pp"), ("create", "port_pair_groups", "g"), ("create", "port_chains", "c")]
    with pytest.raises(ValueError, match="kind: routers is not one of"):
        repairs({"routers": {}}, {})


def test_a_worker_overtaken_mid_send_changes_nothing_and_stops(engine: Engine) -> None:
    made = changes(engine, 2)
    now = [0.0]
    receiver = Srfabric()
    other = Journal(engine, receiver.send, clock=lambda: now[0], stale_s=30.0)

    def slow(entry: Entry) -> tuple[str, str]:
        now[0] = 31.0  # this send outlasts its claim: another worker takes the row over meanwhile
        assert other.run_once() == 2
        return receiver.send(entry)

    slow_worker = Journal(engine, slow, clock=lambda: now[0], stale_s=30.0)
    assert slow_worker.run_once() == 0  # its late answer settles nothing and it goes no further
    assert receiver.applied == [("create", ident) for ident in made] and receiver.received == 3
    assert slow_worker.counts() == {"completed": 2}


def test_backoff_stays_bounded_however_long_srfabric_is_away(engine: Engine) -> None:
    from sqlalchemy import update

    from networking_srfabric.journal import JOURNAL

    changes(engine, 1)
    with engine.begin() as db:
        db.execute(update(JOURNAL).values(retry_count=5000))
    receiver = Srfabric()
    receiver.up = False
    journal = Journal(engine, receiver.send, clock=lambda: 0.0, backoff_max_s=60.0)
    assert journal.run_once() == 0 and journal.wait_s() == 60.0


def test_unsent_counts_the_rows_srfabric_has_not_got_yet(engine: Engine) -> None:
    from networking_srfabric.journal import unsent

    changes(engine, 2)
    with engine.begin() as db:
        assert unsent(db) == 2
    Journal(engine, Srfabric().send, clock=lambda: 0.0).run_once()
    with engine.begin() as db:
        assert unsent(db) == 0
