"""The API's command-line clients as a new user meets them after ``srfabric up``: ``--url`` and ``--token`` go
before or after the action, and a host is named by its port's name, its address, or the name ``up`` printed."""

from __future__ import annotations

from typing import Any

import pytest

from srfabric.cli import build_parser
from srfabric.cli import chain as chain_cli
from srfabric.errors import SrfabricError

PORTS = [{"id": "p1", "name": "host-10.0.0.1", "device_id": "", "fixed_ips": [{"ip_address": "10.0.0.1"}]},
         {"id": "p2", "name": "v1-in", "device_id": "v1", "fixed_ips": []}]


@pytest.mark.parametrize("argv", [["stream", "--url", "http://a:1", "--token", "t", "list"],
                                  ["stream", "list", "--url", "http://a:1", "--token", "t"],
                                  ["chain", "list", "--url", "http://a:1", "--token", "t"]])
def test_url_and_token_are_taken_before_or_after_the_action(argv: list[str]) -> None:
    args = build_parser()[0].parse_args(argv)
    assert (args.url, args.token) == ("http://a:1", "t")


def test_a_host_is_found_by_name_address_or_up_s_name(monkeypatch: pytest.MonkeyPatch) -> None:
    up: dict[str, Any] = {"hosts": {"h1": {"ip": "10.0.0.1"}}}
    monkeypatch.setattr(chain_cli, "read_up_state", lambda: up)
    for name in ("host-10.0.0.1", "10.0.0.1", "h1"):
        assert chain_cli.node_port(PORTS, name, "talker") == "p1"
    assert chain_cli.node_port(PORTS, "v1", "talker") == "p2"
    with pytest.raises(SrfabricError, match="talker: no port named 'h9'"):
        chain_cli.node_port(PORTS, "h9", "talker")
