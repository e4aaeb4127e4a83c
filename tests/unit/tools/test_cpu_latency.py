"""The PM QoS hold of ``bench dataplane``: what it writes, that it lets go, and its errors."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from srfabric.errors import SrfabricError
from srfabric_tools.bench.cpu_latency import cpu_latency_held


def test_the_limit_is_written_as_a_native_s32_and_held_inside_the_block(tmp_path: Path) -> None:
    device = tmp_path / "cpu_dma_latency"
    device.write_bytes(b"")
    with cpu_latency_held(0, str(device)) as held:
        assert held == 0
        assert device.read_bytes() == struct.pack("i", 0)


def test_nothing_is_opened_without_a_limit(tmp_path: Path) -> None:
    with cpu_latency_held(None, str(tmp_path / "absent")) as held:
        assert held is None


@pytest.mark.parametrize("limit", [-1, 2_000_000_001])
def test_a_limit_out_of_range_is_refused_by_name(limit: int, tmp_path: Path) -> None:
    with pytest.raises(SrfabricError, match="cpu_latency_us.*outside 0..2000000000"), \
            cpu_latency_held(limit, str(tmp_path / "never")):
        pass


def test_a_missing_device_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(SrfabricError, match="cpu_latency_us: cannot open .*absent"), \
            cpu_latency_held(0, str(tmp_path / "absent")):
        pass
