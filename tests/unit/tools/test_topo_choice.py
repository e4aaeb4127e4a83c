"""``srfabric up --topo``: named topologies, a JSON file, and errors that name the field and the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srfabric.errors import ModelError
from srfabric_tools.testbed.topo_choice import from_json, topology


def test_named_topologies() -> None:
    fat = topology("fat-tree:4", functions=3)
    assert len(fat.switches) == 20 and len(fat.hosts) == 16
    assert {fat.switches[f.switch].role for f in fat.functions.values()} == {"edge"}
    single = topology("line:1", functions=1)
    assert single.functions["v1"].switch == "s1" and len(single.links) == 0
    assert len(topology("tsn-fig7", functions=0).switches) > 0


def test_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"switches": [{"name": "a"}, {"name": "b", "role": "core"}],
                                "links": [["a", "b"]], "hosts": [{"name": "h1", "switch": "a"}],
                                "functions": [{"name": "fw", "switch": "b"}]}))
    spec = topology(str(path), functions=5)  # a file's own functions stay, none are added
    assert sorted(spec.switches) == ["a", "b"] and list(spec.functions) == ["fw"] and spec.hosts["h1"].switch == "a"


@pytest.mark.parametrize(("text", "functions", "message"), [
    ("fat-tree:5", 0, "topo: fat-tree:K needs an even K from 2 to 6, got 5"),
    ("line:x", 0, "topo: line:N needs a whole number, got 'x'"),
    ("line:0", 0, "topo: line:N needs N from 1 to 64, got 0"),
    ("line:3", 40, "functions: must be 0..32, got 40"),
    ("/nonexistent.json", 0, "topo: cannot read /nonexistent.json"),
])
def test_bad_names_say_what_is_wrong(text: str, functions: int, message: str) -> None:
    with pytest.raises(ModelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        topology(text, functions)


@pytest.mark.parametrize(("document", "message"), [
    ([], "topo: the file must hold a JSON object"),
    ({"switches": []}, "switches: needs 1 to 64 switches, got 0"),
    ({"switches": [{"name": "a", "role": "spine"}]}, "switches[0].role: must be edge, aggregation or core"),
    ({"switches": [{"name": "a-very-long-name"}]}, "switches[0].name: must be a short name"),
    ({"switches": [{"name": "a"}], "links": [["a", "z"]]}, "links[0]: must be a pair of known switch names"),
    ({"switches": [{"name": "a"}], "hosts": [{"name": "h1", "switch": "b"}]}, "hosts[0].switch: 'b' is not one"),
    ({"switches": [{"name": "a"}], "hosts": [{"name": "a", "switch": "a"}]}, "hosts[0].name: 'a' is taken"),
])
def test_bad_json_names_the_item_and_field(document: object, message: str) -> None:
    with pytest.raises(ModelError, match=message.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        from_json(document)
