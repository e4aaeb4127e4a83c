"""A database that went away is an outage the controller rides out, logged in one line naming the database's
reason; any other failure is logged with its traceback (the soak counts tracebacks as bugs)."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy.exc import OperationalError

from srfabric.api.errors import log_failure

log = logging.getLogger("srfabric.test")


def test_a_database_away_is_one_line_and_a_bug_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    away = OperationalError("SELECT 1", {}, Exception("terminating connection due to administrator command"))
    with caplog.at_level(logging.WARNING, logger="srfabric.test"):
        log_failure(log, away, "could not keep the learned fabric")
        try:
            raise ValueError("a bug")
        except ValueError as bug:
            log_failure(log, bug, "could not keep the learned fabric")
    outage, bug_record = caplog.records
    assert outage.levelno == logging.WARNING and outage.exc_info is None
    assert "administrator command" in outage.getMessage()
    assert bug_record.levelno == logging.ERROR and bug_record.exc_info is not None
