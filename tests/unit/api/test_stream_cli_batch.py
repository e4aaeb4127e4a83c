"""``srfabric stream batch FILE``: the file's streams become one bulk request, hosts named as on the command
line; a bad file is refused naming the item and field, before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from srfabric.cli.stream import batch_bodies
from srfabric.errors import SrfabricError


class Ports:
    """The one call the batch reader makes: the port list."""

    def list(self, kind: str) -> list[dict[str, Any]]:
        assert kind == "ports"
        return [{"id": "p1", "name": "h1", "device_id": ""}, {"id": "p3", "name": "h3", "device_id": ""}]


def test_hosts_become_port_ids_and_the_rest_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "streams.json"
    path.write_text(json.dumps([{"talker": "h1", "listener": "h3", "name": "cam", "period_ns": 500_000}]))
    bodies = batch_bodies(Ports(), str(path))  # type: ignore[arg-type]
    assert bodies == [{"talker": "p1", "listener": "p3", "name": "cam", "period_ns": 500_000}]


@pytest.mark.parametrize(("text", "message"), [
    ("{", "file: "),
    ('{"talker": "h1"}', "file: "),
    ('[{"talker": "h1"}]', "file[0].listener: must name a host"),
    ('[{"talker": "h1", "listener": "h9"}]', "listener: no port named 'h9'"),
])
def test_a_bad_file_names_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "streams.json"
    path.write_text(text)
    with pytest.raises(SrfabricError) as error:
        batch_bodies(Ports(), str(path))  # type: ignore[arg-type]
    assert str(error.value).startswith(message)
