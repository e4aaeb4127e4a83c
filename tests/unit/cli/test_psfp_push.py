"""``srfabric psfp push``'s bad input is named before anything is read or sent: a bridge the bridges file does not
have, a confirm timeout out of its range, a bridges file that is not one."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from srfabric.cli.client import SfcClient
from srfabric.cli.psfp import push
from srfabric.errors import SrfabricError
from srfabric.model.management import BridgeAccess, write_bridges_file


@pytest.mark.parametrize(("bridge", "timeout_s", "named"), [
    ("s9", 30, "s9 is not in"),
    ("s1", 0, "confirm-timeout-s"),
])
def test_bad_input_is_named_and_nothing_is_sent(tmp_path: Path, bridge: str, timeout_s: int, named: str) -> None:
    bridges = tmp_path / "bridges.json"
    write_bridges_file(bridges, {"s1": BridgeAccess("s1", "127.0.0.1", "root", 1)})
    args = argparse.Namespace(bridge=bridge, bridges=bridges, confirm_timeout_s=timeout_s)
    with SfcClient("http://127.0.0.1:1") as client, pytest.raises(SrfabricError, match=named):
        push(client, args)


def test_a_bridges_file_that_is_not_one_is_named(tmp_path: Path) -> None:
    bridges = tmp_path / "bridges.json"
    bridges.write_text("{")
    args = argparse.Namespace(bridge="s1", bridges=bridges, confirm_timeout_s=30)
    with SfcClient("http://127.0.0.1:1") as client, pytest.raises(SrfabricError, match="bridges file"):
        push(client, args)
