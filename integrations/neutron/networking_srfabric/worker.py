"""The journal's worker inside Neutron: one thread per API process, woken by each postcommit and every few
seconds, sending the rows in order (``journal.Journal``); the claims keep several processes from sending one row
twice. The journal's table is made in Neutron's database on first use.

Neutron runs under eventlet: this thread is a green one, and runs while the API's server yields (the stack serves
the API with eventlet's own WSGI server, which always does)."""

from __future__ import annotations

import logging
import threading
from functools import partial

from sqlalchemy import Engine

from networking_srfabric.config import options
from networking_srfabric.journal import JOURNAL_METADATA, Journal
from networking_srfabric.sender import http_call, send

LOG = logging.getLogger(__name__)
IDLE_S = 5.0  # also run this often when nothing woke the worker (rows another process recorded)


class JournalWorker:
    def __init__(self, engine: Engine) -> None:
        JOURNAL_METADATA.create_all(engine)
        conf = options()
        self.journal = Journal(engine, partial(send, http_call(conf.url, conf.token, conf.timeout)),
                               backoff_max_s=conf.backoff_max, stale_s=conf.stale_claim)
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="srfabric-journal", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        wait: float | None = 0.0
        while True:
            self._wake.wait(IDLE_S if wait is None else min(IDLE_S, max(wait, 0.01)))
            self._wake.clear()
            try:
                self.journal.run_once()
                wait = self.journal.wait_s()
            except Exception:  # the database may be briefly away: the rows stay and are sent later
                LOG.exception("srfabric journal: a pass failed")
                wait = None


_worker: JournalWorker | None = None
_lock = threading.Lock()


def worker(engine: Engine) -> JournalWorker:
    """This process's worker (drivers of every kind share it)."""
    global _worker
    with _lock:
        if _worker is None:
            _worker = JournalWorker(engine)
        return _worker
