"""Write tests/vectors/*.json: byte-exact codec vectors shared with data planes in other languages.

Run after a deliberate format change only; the unit tests check the codecs against these files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from srfabric.codecs.mac_nibble import MacNibbleCodec
from srfabric.codecs.mac_vlan_mpls import MacVlanMplsCodec
from srfabric.errors import SrfabricError

OUT = Path(__file__).resolve().parent.parent / "tests" / "vectors"


def nibble_case(ports: list[int], note: str = "") -> dict:
    codec = MacNibbleCodec()
    header = codec.encode(ports)
    steps = []
    while codec.remaining(header):
        port, header = codec.decode(header)
        steps.append({"port": port, "eth_src": str(header)})
    case = {"ports": ports, "eth_src": str(codec.encode(ports)), "steps": steps}
    return {"note": note, **case} if note else case


def mpls_case(ports: list[int], note: str = "") -> dict:
    codec = MacVlanMplsCodec()
    header = codec.encode(ports)
    steps = []
    while codec.remaining(header):
        port, header = codec.decode(header)
        steps.append({"port": port, **header.wire()})
    case = {"ports": ports, **codec.encode(ports).wire(), "steps": steps}
    return {"note": note, **case} if note else case


def error_case(codec, ports: list[int]) -> dict:
    try:
        codec.encode(ports)
    except SrfabricError as error:
        return {"ports": ports, "error_field": error.field}
    raise AssertionError(f"{ports} should not encode")


def main() -> None:
    rng = random.Random(2026)
    OUT.mkdir(parents=True, exist_ok=True)
    nibble = [
        nibble_case([3, 2, 4], "TSN paper Fig. 1/3: path 1->2->5 leaves through ports 3, 2, 4"),
        nibble_case([], "exhausted header: hop count 0"),
        nibble_case([15] * 11, "longest path, highest port"),
        nibble_case([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], "11 hops"),
    ] + [nibble_case([rng.randint(1, 15) for _ in range(rng.randint(1, 11))]) for _ in range(12)]
    nibble_errors = [error_case(MacNibbleCodec(), p) for p in ([16], [0], [1] * 12, [3, 2, 99])]
    mpls = [
        mpls_case([3, 2, 4], "three hops: slots 3, 2, 1 = dst MAC bytes 2, 1, 0"),
        mpls_case([], "exhausted header: TTL 0"),
        mpls_case(list(range(1, 11)), "ten hops fill dst MAC, VLAN ID and one label"),
        mpls_case([255] * 10, "highest port in every slot"),
        mpls_case(list(range(1, 13)), "twelve hops need a second label"),
    ] + [mpls_case([rng.randint(1, 255) for _ in range(rng.randint(1, 10))]) for _ in range(12)]
    mpls_errors = [error_case(MacVlanMplsCodec(), p) for p in ([256], [0], [1] * 28)]
    (OUT / "mac_nibble.json").write_text(
        json.dumps({"codec": "mac-nibble", "vectors": nibble, "errors": nibble_errors}, indent=1) + "\n"
    )
    (OUT / "mac_vlan_mpls.json").write_text(
        json.dumps({"codec": "mac-vlan-mpls", "vectors": mpls, "errors": mpls_errors}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
