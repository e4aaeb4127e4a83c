"""The ``mac-nibble`` codec of "Coupling Source Routing with TSN" (Fig. 2-4, 6).

The 48-bit source MAC carries the path. Its most significant nibble is the
number of hops still to go; below it, 4-bit egress ports, the last hop in
nibble 0 (bits 0-3), the one before it in nibble 1 (bits 4-7) and so on.
A switch reading hop count ``h`` outputs to the port in nibble ``h - 1`` and
writes ``h - 1`` back as the hop count, so at most 11 hops of ports 1..15 fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srfabric.codecs.macaddr import mac_to_str
from srfabric.errors import DecodingError, EncodingError

MAX_HOPS = 11
MAX_PORT = 15
COUNT_SHIFT = 44
COUNT_MASK = 0xF << COUNT_SHIFT


@dataclass(frozen=True)
class NibbleHeader:
    """A source MAC that carries a path; ``eth_src`` is the 48-bit value."""

    eth_src: int

    @property
    def hop_count(self) -> int:
        return (self.eth_src >> COUNT_SHIFT) & 0xF

    def __str__(self) -> str:
        return mac_to_str(self.eth_src)


class MacNibbleCodec:
    """Encode up to 11 ports of 1..15 into a source MAC address.

    Examples
    --------
    The path 1 -> 2 -> 5 of the TSN paper's Fig. 1 leaves the switches through
    ports 3, 2 and 4:

    >>> codec = MacNibbleCodec()
    >>> str(codec.encode([3, 2, 4]))
    '30:00:00:00:03:24'
    >>> port, rest = codec.decode(codec.encode([3, 2, 4]))
    >>> port, str(rest)
    (3, '20:00:00:00:03:24')
    """

    name = "mac-nibble"
    capacity = MAX_HOPS
    max_port = MAX_PORT

    def encode(self, ports: Sequence[int]) -> NibbleHeader:
        if len(ports) > MAX_HOPS:
            raise EncodingError("ports", f"{len(ports)} hops exceed the mac-nibble limit of {MAX_HOPS}")
        value = len(ports) << COUNT_SHIFT
        for hop, port in enumerate(ports, start=1):
            if not isinstance(port, int) or not 1 <= port <= MAX_PORT:
                raise EncodingError(
                    f"ports[{hop - 1}]",
                    f"port {port!r} is outside 1..{MAX_PORT} (4-bit nibble, 0 is padding)",
                )
            value |= port << (4 * (len(ports) - hop))
        return NibbleHeader(value)

    def decode(self, header: NibbleHeader) -> tuple[int, NibbleHeader]:
        count = header.hop_count
        if count == 0:
            raise DecodingError("eth_src", "hop count is 0: the path is exhausted")
        if count > MAX_HOPS:
            raise DecodingError("eth_src", f"hop count {count} exceeds {MAX_HOPS}")
        port = (header.eth_src >> (4 * (count - 1))) & 0xF
        if port == 0:
            raise DecodingError("eth_src", f"nibble {count - 1} holds port 0 (padding)")
        rest = (header.eth_src & ~COUNT_MASK) | ((count - 1) << COUNT_SHIFT)
        return port, NibbleHeader(rest)

    def remaining(self, header: NibbleHeader) -> int:
        return header.hop_count
