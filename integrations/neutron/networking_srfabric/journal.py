"""The driver's journal, as networking-odl keeps one.

Each Neutron change is written as a row of Neutron's own database, in the same transaction as the change
(``record``, from a driver's precommit): a change Neutron rolls back leaves no row, and one it commits cannot
be lost. A worker (``Journal.run_once``) sends the rows to srfabric strictly in their order, one at a time:
before it sends a row it claims it (several API workers share the table), a row that could not be delivered
waits with exponential backoff and holds back every later row, and a row srfabric refuses is marked failed
(with the reason) so that the rest can go on. A row whose worker died mid-send is claimed again once its claim
is ``stale_s`` old; srfabric applies rows idempotently (by Neutron's id), so a row sent twice arrives once.
The clock and the sender are passed in; the clock must mean the same in every process sharing the table
(the default is the wall clock).

>>> from sqlalchemy import create_engine
>>> engine = create_engine("sqlite://")
>>> JOURNAL_METADATA.create_all(engine)
>>> with engine.begin() as db:
...     _ = record(db, "port_pair", "p1", "create", {"id": "p1"})
>>> sent = []
>>> journal = Journal(engine, lambda entry: (sent.append(entry.object_uuid), (DONE, ""))[1], clock=lambda: 0.0)
>>> journal.run_once(), sent, journal.counts()
(1, ['p1'], {'completed': 1})
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Column, Engine, Integer, MetaData, String, Table, Text, func, select, update
from sqlalchemy.engine import Connection

JOURNAL_METADATA = MetaData()
JOURNAL = Table(
    "srfabric_journal", JOURNAL_METADATA,
    Column("seqnum", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("object_type", String(36), nullable=False),
    Column("object_uuid", String(36), nullable=False),
    Column("operation", String(16), nullable=False),
    Column("data", Text, nullable=False),
    Column("state", String(16), nullable=False, index=True),
    Column("retry_count", Integer, nullable=False, default=0),
    # The worker's clock in whole microseconds: a claim matches the value it read exactly (MySQL's FLOAT is single
    # precision, and comes back rounded).
    Column("not_before", BigInteger, nullable=False, default=0),
    Column("claimed_at", BigInteger, nullable=False, default=0),
    Column("reason", Text, nullable=False, default=""),
)
PENDING, PROCESSING, COMPLETED, FAILED = "pending", "processing", "completed", "failed"
OPERATIONS = ("create", "update", "delete")
DONE, RETRY, REJECTED = "done", "retry", "rejected"  # what a send can come to


@dataclass(frozen=True)
class Entry:
    """One journal row as the sender gets it."""

    seqnum: int
    object_type: str
    object_uuid: str
    operation: str
    data: dict[str, Any]
    claimed_at: int = 0  # this worker's claim (microseconds): settling needs it still to be the row's


Sender = Callable[[Entry], tuple[str, str]]  # (DONE | RETRY | REJECTED, why)


def record(db: Connection, object_type: str, object_uuid: str, operation: str, data: dict[str, Any]) -> int:
    """Write one change into the journal inside the caller's open transaction; its sequence number."""
    if operation not in OPERATIONS:
        raise ValueError(f"operation: {operation!r} is not one of {', '.join(OPERATIONS)}")
    result = db.execute(JOURNAL.insert().values(object_type=object_type, object_uuid=object_uuid,
                                                operation=operation, data=json.dumps(data, sort_keys=True, default=str),
                                                state=PENDING, retry_count=0, not_before=0, claimed_at=0,
                                                reason=""))
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


def unsent(db: Connection) -> int:
    """How many rows wait to be sent (or are being sent): while any does, srfabric's state is behind Neutron's."""
    return int(db.execute(select(func.count()).select_from(JOURNAL)
                          .where(JOURNAL.c.state.in_((PENDING, PROCESSING)))).scalar_one())


class Journal:
    """Sends the journal's rows in order with ``send``; ``run_once`` is one pass of the worker."""

    def __init__(self, engine: Engine, send: Sender, clock: Callable[[], float] = time.time,
                 backoff_min_s: float = 0.1, backoff_max_s: float = 60.0, stale_s: float = 30.0) -> None:
        self.engine = engine
        self.send = send
        self.clock = clock
        self.backoff_min_s, self.backoff_max_s = backoff_min_s, backoff_max_s
        self.stale_s = stale_s

    def run_once(self, limit: int = 1000) -> int:
        """Send rows in order until one must wait (backoff, or another worker holds it) or none is left; the
        number completed."""
        done = 0
        while done < limit:
            entry = self._claim_head()
            if entry is None:
                return done
            outcome, why = self.send(entry)
            if not self._settle(entry, outcome, why) or outcome == RETRY:
                return done  # overtaken (the other worker goes on from here), or srfabric is away
            done += outcome == DONE
        return done

    def now_us(self) -> int:
        return round(self.clock() * 1_000_000)

    def wait_s(self) -> float | None:
        """How long until the head row may be tried again (0: now); None when nothing is waiting."""
        head = self._head()
        if head is None:
            return None
        now = self.now_us()
        if head.state == PROCESSING:
            return max(0.0, (head.claimed_at - now) / 1e6 + self.stale_s)
        return max(0.0, (head.not_before - now) / 1e6)

    def counts(self) -> dict[str, int]:
        with self.engine.connect() as db:
            rows = db.execute(select(JOURNAL.c.state, func.count()).group_by(JOURNAL.c.state)).all()
        return {state: count for state, count in rows}

    def failed(self) -> list[tuple[int, str, str, str]]:
        """Rows srfabric refused: (sequence number, type, id, why)."""
        with self.engine.connect() as db:
            rows = db.execute(select(JOURNAL.c.seqnum, JOURNAL.c.object_type, JOURNAL.c.object_uuid, JOURNAL.c.reason)
                              .where(JOURNAL.c.state == FAILED).order_by(JOURNAL.c.seqnum)).all()
        return [(int(s), t, u, r) for s, t, u, r in rows]

    def _head(self) -> Any:
        with self.engine.connect() as db:
            return db.execute(select(JOURNAL).where(JOURNAL.c.state.in_((PENDING, PROCESSING)))
                              .order_by(JOURNAL.c.seqnum).limit(1)).first()

    def _claim_head(self) -> Entry | None:
        """The oldest unsent row, claimed for this worker; None when it must wait or there is none."""
        head = self._head()
        if head is None:
            return None
        now = self.now_us()
        if head.state == PENDING and head.not_before > now:
            return None  # backing off: every later row waits too, to keep the order
        if head.state == PROCESSING and head.claimed_at + round(self.stale_s * 1_000_000) > now:
            return None  # another worker is sending it
        with self.engine.begin() as db:  # the claim: only one worker's update finds the row as it was
            claimed = db.execute(update(JOURNAL).where(JOURNAL.c.seqnum == head.seqnum,
                                                       JOURNAL.c.state == head.state,
                                                       JOURNAL.c.claimed_at == head.claimed_at)
                                 .values(state=PROCESSING, claimed_at=now)).rowcount
        if claimed != 1:
            return None
        return Entry(int(head.seqnum), head.object_type, head.object_uuid, head.operation, json.loads(head.data), now)

    def _settle(self, entry: Entry, outcome: str, why: str) -> bool:
        """Record the send's outcome, if this worker's claim still holds (a worker slower than ``stale_s`` may
        have been overtaken: the row is the other one's now); whether it did."""
        if outcome not in (DONE, RETRY, REJECTED):
            raise ValueError(f"outcome: {outcome!r} is not one of {DONE}, {RETRY}, {REJECTED}")
        now = self.now_us()
        row = JOURNAL.c
        mine = (row.seqnum == entry.seqnum, row.state == PROCESSING, row.claimed_at == entry.claimed_at)
        with self.engine.begin() as db:
            if outcome == DONE:
                values: dict[str, Any] = {"state": COMPLETED, "reason": ""}
            elif outcome == REJECTED:
                values = {"state": FAILED, "reason": why}
            else:
                tries = db.execute(select(row.retry_count).where(row.seqnum == entry.seqnum)).scalar_one() + 1
                delay = min(self.backoff_max_s, self.backoff_min_s * 2 ** min(tries - 1, 32))
                values = {"state": PENDING, "retry_count": tries, "not_before": now + round(delay * 1_000_000),
                          "reason": why}
            return db.execute(update(JOURNAL).where(*mine).values(**values)).rowcount == 1
