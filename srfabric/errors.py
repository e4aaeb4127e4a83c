"""Errors that every layer raises for bad input.

Each error names the offending field and the limit it broke, so the CLI and
the API can print it as it is, without a traceback.
"""

from __future__ import annotations


class SrfabricError(Exception):
    """Base class of all errors srfabric reports to its users."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class EncodingError(SrfabricError):
    """A path cannot be written into the chosen header format."""


class DecodingError(SrfabricError):
    """A header cannot be read (malformed, exhausted or out of range)."""


class RoutingError(SrfabricError):
    """No path exists, or it cannot be split into encodable pathlets."""


class ModelError(SrfabricError):
    """A topology, chain or classifier is inconsistent."""


class Unavailable(SrfabricError):
    """A device did not answer (unreachable, timed out, restarting): nothing changed, retry later."""
