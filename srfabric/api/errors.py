"""Errors in Neutron's shape: ``{"NeutronError": {"type": ..., "message": ..., "detail": ""}}``.

``type`` is the networking-sfc exception's class name, so clients written for
OpenStack recognise them; every message names the field and the limit.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error the API reports with ``status``; nothing was changed."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message

    def body(self) -> dict[str, Any]:
        return neutron_error(self.kind, self.message)


def neutron_error(kind: str, message: str) -> dict[str, Any]:
    return {"NeutronError": {"type": kind, "message": message, "detail": ""}}


def bad_request(message: str, kind: str = "HTTPBadRequest") -> ApiError:
    return ApiError(400, kind, message)


def not_found(kind: str, what: str, ident: str) -> ApiError:
    return ApiError(404, kind, f"{what} {ident} not found.")


def in_use(kind: str, message: str) -> ApiError:
    return ApiError(409, kind, message)
