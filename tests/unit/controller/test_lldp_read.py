"""srfabric's own LLDP frames are read at fixed places (a k=16 round is 4,096 of them); any frame, srfabric's
changed anywhere or cut short or another's, reads as the TLV walk reads it, or is left to it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srfabric.controller.packets import lldp_frame, parse_lldp, read_lldp_tlvs, read_own_lldp
from srfabric.errors import DecodingError

KEY = b"k" * 16


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    """srfabric's frame (signed or not), with some bytes changed, cut short or followed by others."""
    frame = bytearray(lldp_frame(draw(st.integers(0, (1 << 64) - 1)), draw(st.integers(0, 1 << 20)),
                                 key=draw(st.sampled_from([KEY, b""])), sent_ns=draw(st.integers(0, (1 << 64) - 1))))
    for at, value in draw(st.lists(st.tuples(st.integers(0, len(frame) - 1), st.integers(0, 255)), max_size=3)):
        frame[at] = value
    cut = draw(st.integers(0, len(frame)))
    return bytes(frame[:cut]) + draw(st.binary(max_size=8)) if draw(st.booleans()) else bytes(frame)


@settings(max_examples=3000, deadline=None)
@given(frames())
def test_the_fixed_read_agrees_with_the_tlv_walk(frame: bytes) -> None:
    fast = read_own_lldp(frame)
    if fast is None:
        return
    assert fast == read_lldp_tlvs(frame)


def test_a_signed_frame_reads_back_and_a_changed_signature_does_not() -> None:
    frame = lldp_frame(0x1234, 7, key=KEY, sent_ns=99)
    assert read_own_lldp(frame) is not None
    assert parse_lldp(frame, KEY) == (0x1234, 7, 99)
    with pytest.raises(DecodingError, match="not signed with this controller's key"):
        parse_lldp(frame[:-3] + bytes([frame[-3] ^ 1]) + frame[-2:], KEY)
