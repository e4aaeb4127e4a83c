"""Conversions between 48-bit integers and colon-separated MAC strings."""

from __future__ import annotations

from srfabric.errors import SrfabricError


def mac_to_str(value: int) -> str:
    """Format a 48-bit integer as ``aa:bb:cc:dd:ee:ff``.

    >>> mac_to_str(0x300000000324)
    '30:00:00:00:03:24'
    """
    return ":".join(f"{(value >> shift) & 0xFF:02x}" for shift in range(40, -8, -8))


def mac_from_str(text: str, field: str = "mac") -> int:
    """Parse ``aa:bb:cc:dd:ee:ff`` (or ``-`` separated) into an integer.

    >>> hex(mac_from_str("30:00:00:00:03:24"))
    '0x300000000324'
    """
    parts = text.replace("-", ":").split(":")
    if len(parts) != 6 or not all(len(p) in (1, 2) for p in parts):
        raise SrfabricError(field, f"{text!r} is not a MAC address (6 hex octets)")
    try:
        octets = [int(p, 16) for p in parts]
    except ValueError:
        raise SrfabricError(field, f"{text!r} is not a MAC address (6 hex octets)") from None
    value = 0
    for octet in octets:
        value = (value << 8) | octet
    return value
