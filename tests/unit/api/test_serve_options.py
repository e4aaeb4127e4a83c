"""``srfabric serve``'s options out of range are refused before anything starts, naming the option and its
limits."""

from __future__ import annotations

import pytest

from srfabric.cli import main


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--max-hosts-per-port", "0", "--max-hosts-per-port: must be in 1..4096, got 0"),
    ("--max-hosts-per-port", "5000", "--max-hosts-per-port: must be in 1..4096, got 5000"),
    ("--cycle-ns", "10", "--cycle-ns: must be at least 100000, got 10"),
    ("--flow-idle-timeout", "70000", "--flow-idle-timeout: must be in 0..65535 (OpenFlow's 16 bits), got 70000"),
    ("--tt-queue", "2", "--tt-queue: 2 is best effort's or an SR class's queue (0, 2, 1)"),
])

def test_an_option_out_of_range_is_refused_naming_it(option: str, value: str, said: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--openflow-insecure", "--no-auth", "--db", "sqlite:///:memory:", option, value]) == 2
    assert said in capsys.readouterr().err


def test_edges_need_postgresql(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--openflow-insecure", "--no-auth", "--db", "sqlite:///:memory:", "--port", "0",
                 "--openflow-port", "0", "--edges", "s1"]) == 2
    assert "--edges: instances share a fabric through PostgreSQL" in capsys.readouterr().err
