"""``srfabric chain create --file``: the description is checked field by field; ``destination`` may be left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srfabric.cli.chain import read_description
from srfabric.errors import SrfabricError

CHAIN = [{"name": "v1", "direction": "in"}]


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(data))
    return path


def test_a_chain_without_destination_is_read(tmp_path: Path) -> None:
    data = read_description(write(tmp_path, {"source": "S", "chain": CHAIN}))
    assert "destination" not in data and data["source"] == "S"


@pytest.mark.parametrize(("data", "field"), [
    ({"chain": CHAIN}, "source"),
    ({"source": "S", "destination": "", "chain": CHAIN}, "destination"),
    ({"source": "S", "destination": 3, "chain": CHAIN}, "destination"),
    ({"source": "S", "chain": []}, "chain"),
    ({"source": "S", "chain": [{"name": "v1", "direction": "up"}]}, "chain[0].direction"),
    ({"source": "S", "chain": [{"name": "v1", "service_function_parameters": "mpls"}]},
     "chain[0].service_function_parameters"),
])
def test_a_bad_description_names_the_field(tmp_path: Path, data: object, field: str) -> None:
    with pytest.raises(SrfabricError) as caught:
        read_description(write(tmp_path, data))
    assert caught.value.field == field
