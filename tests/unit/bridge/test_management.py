"""The bridges file: every bad entry is refused naming the field and the limit; credentials stay out of views."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from srfabric.api.serve import gates_of
from srfabric.errors import ModelError, SrfabricError
from srfabric.model.management import read_bridges, read_bridges_file


@pytest.mark.parametrize(("document", "field", "says"), [
    ([], "bridges", "must be an object"),
    ({"bridges": {"s1": "10.0.0.1"}}, "bridges.s1", "must be an object"),
    ({"bridges": {"s1": {"host": "h", "username": "u", "pasword": "x"}}}, "bridges.s1.pasword", "is not a field"),
    ({"bridges": {"s1": {"host": "", "username": "u"}}}, "bridges.s1.host", "1..255 characters"),
    ({"bridges": {"s1": {"host": "h", "username": "u", "port": True}}}, "bridges.s1.port", "1..65535"),
    ({"bridges": {"s1": {"host": "h", "username": "u", "timeout_s": 500}}}, "bridges.s1.timeout_s", "(0, 120]"),
])
def test_a_bad_bridges_document_is_refused_naming_the_field(document: object, field: str, says: str) -> None:
    with pytest.raises(ModelError) as refused:
        read_bridges(document)
    assert refused.value.field == field and says in refused.value.message


def test_a_bridges_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bridges.json"
    path.write_text("{bridges")
    with pytest.raises(ModelError) as refused:
        read_bridges_file(path)
    assert refused.value.field == str(path)


def test_the_public_view_holds_no_credential() -> None:
    access = read_bridges({"bridges": {"s1": {"host": "h", "username": "u", "password": "secret"}}})["s1"]
    assert "secret" not in str(access.public())


def test_netconf_gates_need_the_bridges_file() -> None:
    with pytest.raises(SrfabricError) as refused:
        gates_of(argparse.Namespace(gates="netconf", bridges=None, confirm_timeout_s=30))
    assert refused.value.field == "--bridges"
