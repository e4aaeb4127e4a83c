"""The interface every header codec implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class Codec(Protocol):
    """Encode a port list into header fields and decode it one hop at a time.

    ``encode(ports)`` returns an immutable header object; ``decode(header)``
    returns ``(next_port, rest)`` where ``rest`` is the header the next switch
    sees. ``capacity`` is how many ports one header of the simplest form holds
    (the form Open vSwitch decodes with its Nicira extensions: output from a
    field, load and move of bits, matching the MPLS TTL).
    """

    name: str
    capacity: int
    max_port: int

    def encode(self, ports: Sequence[int]) -> Any: ...

    def decode(self, header: Any) -> tuple[int, Any]: ...

    def remaining(self, header: Any) -> int: ...


def get_codec(name: str) -> Codec:
    """Return the codec called ``name`` (``mac-nibble`` or ``mac-vlan-mpls``).

    Examples
    --------
    >>> get_codec("mac-nibble").capacity
    11
    """
    from srfabric.codecs.mac_nibble import MacNibbleCodec
    from srfabric.codecs.mac_vlan_mpls import MacVlanMplsCodec
    from srfabric.errors import SrfabricError

    codecs: dict[str, Codec] = {
        "mac-nibble": MacNibbleCodec(),
        "mac-vlan-mpls": MacVlanMplsCodec(),
    }
    if name not in codecs:
        raise SrfabricError("codec", f"unknown codec {name!r}; choose one of {', '.join(codecs)}")
    return codecs[name]


CODEC_NAMES = ("mac-nibble", "mac-vlan-mpls")
