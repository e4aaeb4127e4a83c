"""Errors in Neutron's shape: ``{"NeutronError": {"type": ..., "message": ..., "detail": ""}}``.

``type`` is the networking-sfc exception's class name, so clients written for
OpenStack recognise them; every message names the field and the limit.
"""

from __future__ import annotations

import logging
from typing import Any


class ApiError(Exception):
    """An error the API reports with ``status``; nothing was changed."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.detail = ""
        self.extra: dict[str, Any] = {}  # beside Neutron's error (a refused Qcc request's status group)

    def body(self) -> dict[str, Any]:
        return {**neutron_error(self.kind, self.message, self.detail), **self.extra}


def neutron_error(kind: str, message: str, detail: str = "") -> dict[str, Any]:
    return {"NeutronError": {"type": kind, "message": message, "detail": detail}}


def bad_request(message: str, kind: str = "HTTPBadRequest") -> ApiError:
    return ApiError(400, kind, message)


def not_found(kind: str, what: str, ident: str) -> ApiError:
    return ApiError(404, kind, f"{what} {ident} not found.")


def in_use(kind: str, message: str) -> ApiError:
    return ApiError(409, kind, message)


def unavailable(kind: str, message: str) -> ApiError:
    """A device the request needs did not answer: nothing changed, retry later."""
    return ApiError(503, kind, message)


def validation_message(error: dict[str, Any], method: str) -> str:
    """Neutron's wording for a body that does not fit the schema, naming the field."""
    loc = [str(part) for part in error.get("loc", ()) if part != "body"]
    field = ".".join(loc[1:]) if len(loc) > 1 else (loc[0] if loc else "body")
    kind = error.get("type", "")
    if kind == "json_invalid":
        return "Body contains invalid data"
    if kind == "missing":
        if len(loc) <= 1:
            return f"Unable to find '{loc[0] if loc else 'body'}' in request body"
        return f"Failed to parse request. Required attribute '{field}' not specified"
    if kind == "extra_forbidden":
        if method == "PUT" and len(loc) == 2:
            return f"Cannot update read-only attribute {field}"
        return f"Unrecognized attribute(s) '{field}'"
    return f"Invalid input for {field}. Reason: {error.get('msg', 'invalid')}."


def internal_error() -> ApiError:
    """What a client is told when handling its request failed unexpectedly (the log has the traceback)."""
    return ApiError(500, "HTTPInternalServerError", "Request Failed: internal server error while processing your "
                                                    "request.")


def not_leader(leader: str) -> ApiError:
    """A write sent to a follower: 307 to the leader (its URL is also the error's ``detail``), or 503 while
    none is elected."""
    if not leader:
        return ApiError(503, "NoLeader", "No instance leads yet (an election is under way): retry shortly.")
    error = ApiError(307, "NotLeader", f"This instance follows; writes go to the leader at {leader} (HTTP 307 "
                                       "redirect: send the same request there).")
    error.detail = leader
    return error


def database_unavailable(error: BaseException) -> ApiError | None:
    """What a client is told when the database went away under its request (a restart, a lost connection): a
    503 naming the database's own first line; None for any other error.

    >>> from sqlalchemy.exc import OperationalError
    >>> database_unavailable(OperationalError("SELECT 1", {}, Exception("server closed the connection"))).status
    503
    >>> database_unavailable(ValueError("a bug")) is None
    True
    """
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

    # A server that stopped or restarted (psycopg's AdminShutdown and SQLite's errors arrive as OperationalError).
    if not isinstance(error, (OperationalError, InterfaceError)) \
            and not (isinstance(error, DBAPIError) and error.connection_invalidated):
        return None
    reason = str(error.orig).strip().splitlines()[0] if error.orig is not None else type(error).__name__
    return ApiError(503, "DatabaseUnavailable", f"The database did not answer ({reason[:200]}); nothing was "
                                                "changed: retry shortly.")


def log_failure(log: logging.Logger, error: BaseException, what: str) -> None:
    """Log that ``what`` failed: in one line naming the database's reason when the database went away (a restart
    is an outage the caller rides out, not a bug), else with the traceback."""
    away = database_unavailable(error)
    if away is None:
        log.error(what, exc_info=error)
    else:
        log.warning("%s: %s", what, away.message)
