"""``srfabric serve``'s options out of range are refused before anything starts, naming the option and its
limits."""

from __future__ import annotations

import pytest

from srfabric.cli import main


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--max-hosts-per-port", "0", "--max-hosts-per-port: must be in 1..4096, got 0"),
    ("--max-hosts-per-port", "5000", "--max-hosts-per-port: must be in 1..4096, got 5000"),
    ("--cycle-ns", "10", "--cycle-ns: must be at least 100000, got 10"),
])
def test_an_option_out_of_range_is_refused_naming_it(option: str, value: str, said: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--openflow-insecure", "--no-auth", "--db", "sqlite:///:memory:", option, value]) == 2
    assert said in capsys.readouterr().err
