"""Both header codecs: the shared vectors, the papers' examples, random round trips, errors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from srfabric.codecs import MacNibbleCodec, MacVlanMplsCodec, get_codec
from srfabric.codecs.mac_nibble import NibbleHeader
from srfabric.codecs.mac_vlan_mpls import MplsHeader, slot_location
from srfabric.codecs.macaddr import mac_from_str
from srfabric.errors import DecodingError, EncodingError, SrfabricError

VECTORS = Path(__file__).resolve().parents[2] / "vectors"


def load(name: str) -> dict:
    return json.loads((VECTORS / name).read_text())


def test_tsn_paper_example_encodes_to_its_mac() -> None:
    assert str(MacNibbleCodec().encode([3, 2, 4])) == "30:00:00:00:03:24"


@pytest.mark.parametrize("case", load("mac_nibble.json")["vectors"])
def test_nibble_vectors(case: dict) -> None:
    codec = MacNibbleCodec()
    header = codec.encode(case["ports"])
    assert str(header) == case["eth_src"]
    for step in case["steps"]:
        port, header = codec.decode(header)
        assert (port, str(header)) == (step["port"], step["eth_src"])
    assert codec.remaining(header) == 0


@pytest.mark.parametrize("case", load("mac_vlan_mpls.json")["vectors"])
def test_mpls_vectors(case: dict) -> None:
    codec = MacVlanMplsCodec()
    header = codec.encode(case["ports"])
    assert header.wire() == {k: case[k] for k in ("eth_dst", "vlan_tci", "mpls")}
    for step in case["steps"]:
        port, header = codec.decode(header)
        assert port == step["port"]
        assert header.wire() == {k: step[k] for k in ("eth_dst", "vlan_tci", "mpls")}


@pytest.mark.parametrize(
    "name,codec", [("mac_nibble.json", MacNibbleCodec()), ("mac_vlan_mpls.json", MacVlanMplsCodec())]
)
def test_vector_errors_name_the_field(name: str, codec) -> None:
    for case in load(name)["errors"]:
        with pytest.raises(EncodingError) as raised:
            codec.encode(case["ports"])
        assert raised.value.field == case["error_field"]


@pytest.mark.parametrize("codec", [MacNibbleCodec(), MacVlanMplsCodec()])
def test_random_round_trips(codec) -> None:
    rng = random.Random(7)
    limit = 11 if codec.name == "mac-nibble" else 27
    for _ in range(2000):
        ports = [rng.randint(1, codec.max_port) for _ in range(rng.randint(0, limit))]
        header = codec.encode(ports)
        read = []
        while codec.remaining(header):
            port, header = codec.decode(header)
            read.append(port)
        assert read == ports


def test_mpls_slot_layout_matches_field_widths() -> None:
    widths = [sum(piece[2] for piece in slot_location(slot)) for slot in range(1, 11)]
    assert widths == [8] * 10
    assert slot_location(7) == [("vlan_vid", 4, 8)]
    assert slot_location(10) == [("mpls_label", 0, 8)]


def test_decode_errors() -> None:
    with pytest.raises(DecodingError, match="exhausted"):
        MacNibbleCodec().decode(NibbleHeader(0x000000000324))
    with pytest.raises(DecodingError, match="exceeds 11"):
        MacNibbleCodec().decode(NibbleHeader(0xC00000000001))
    with pytest.raises(DecodingError, match="padding"):
        MacNibbleCodec().decode(NibbleHeader(0x200000000001))
    with pytest.raises(DecodingError, match="TTL is 0"):
        MacVlanMplsCodec().decode(MplsHeader(0, 0, (0,), 0))
    with pytest.raises(DecodingError, match="points past"):
        MacVlanMplsCodec().decode(MplsHeader(1, 0, (0,), 11))


def test_unknown_codec_and_bad_mac() -> None:
    with pytest.raises(SrfabricError, match="unknown codec"):
        get_codec("nsh")
    with pytest.raises(SrfabricError, match="not a MAC"):
        mac_from_str("30:00:00")
