"""The rate rig's generator spreads destinations: frame i gets gen_dests[i % N] and a valid IPv4 checksum."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from collections.abc import Iterator

import pytest

from srfabric.xdp import frames, layout
from srfabric.xdp.bpf_syscall import prog_test_run
from srfabric.xdp.loader import LoadedObject, build, load

XDP_REDIRECT, XDP_DROP = 4, 1
LO = 1


@pytest.fixture(scope="module")
def generator() -> Iterator[LoadedObject]:
    build()
    obj = load("generator", f"test-{os.getpid()}-generator")
    try:
        obj.map("gen_port").update(layout.u32(0), layout.u32(LO))
        yield obj
    finally:
        obj.unload()


def checksum_ok(header: bytes) -> bool:
    total = sum(struct.unpack("!10H", header[:20]))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total == 0xFFFF


def spread(obj: LoadedObject, addresses: list[str]) -> None:
    for index, address in enumerate(addresses):
        obj.map("gen_dests").update(layout.u32(index), socket.inet_aton(address))
    obj.map("gen_spread").update(layout.u32(0), layout.u32(len(addresses)))


def test_each_frame_takes_the_next_destination_with_a_valid_checksum(generator: LoadedObject) -> None:
    frame = frames.udp_frame(0x0E0000000000, 0x0A0000000001, "10.0.0.1", "10.0.0.2", size=64)
    generator.map("gen_template").update(layout.u32(0), frame[:32])
    addresses = ["10.1.0.1", "192.168.7.9", "172.16.0.255"]
    spread(generator, addresses)
    try:
        seen = []
        for _ in range(2 * len(addresses)):
            run = prog_test_run(generator.program_fd("stamp_send"), frame)
            assert run.retval == XDP_REDIRECT
            seen.append(str(ipaddress.IPv4Address(run.data[30:34])))
            assert checksum_ok(run.data[14:34]), run.data[14:34].hex()
            assert (run.data[:24], run.data[26:30], run.data[34:]) == (frame[:24], frame[26:30], frame[34:])
        start = addresses.index(seen[0])  # the cursor is per CPU and kept between runs
        assert seen == [addresses[(start + i) % 3] for i in range(6)]
    finally:
        generator.map("gen_spread").update(layout.u32(0), layout.u32(0))
    run = prog_test_run(generator.program_fd("stamp_send"), frame)
    assert run.data == frame  # spreading off: the frame as stamped


def test_a_frame_too_short_for_an_ipv4_header_is_dropped_when_spreading(generator: LoadedObject) -> None:
    generator.map("gen_template").update(layout.u32(0), bytes(32))
    spread(generator, ["10.1.0.1"])
    try:
        assert prog_test_run(generator.program_fd("stamp_send"), bytes(32)).retval == XDP_DROP
    finally:
        generator.map("gen_spread").update(layout.u32(0), layout.u32(0))
