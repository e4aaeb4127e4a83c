"""The topologies ``srfabric up --topo`` knows by name, and a JSON file for any other (pure: no I/O but reading
the file).

Names: ``fat-tree:K`` (K even, 4 by default; functions dealt to the edge
switches), ``line:N`` (N switches in a row, h1 on the first and h2 on the last,
functions dealt to the inner switches, or to the only one), ``tsn-fig7`` (the
coupling paper's Fig. 7). A JSON file::

    {"switches": [{"name": "s1", "role": "edge"}, ...], "links": [["s1", "s2"], ...],
     "hosts": [{"name": "h1", "switch": "s1"}, ...], "functions": [{"name": "v1", "switch": "s2"}, ...]}

Examples
--------
>>> spec = topology("line:3", functions=2)
>>> sorted(spec.switches), sorted(spec.hosts), [f.switch for f in spec.functions.values()]
(['s1', 's2', 's3'], ['h1', 'h2'], ['s2', 's2'])
>>> len(topology("fat-tree:4", functions=7).switches)
20
>>> topology("ring:4", functions=0)
Traceback (most recent call last):
...
srfabric.errors.ModelError: topo: 'ring:4' is not fat-tree:K, line:N, tsn-fig7 or a .json file
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric.model.topo import TopoSpec, fat_tree, tsn_fig7

MAX_SWITCHES = 64  # one OVS process emulates them all; more would not be a fabric one can look at


def topology(text: str, functions: int) -> TopoSpec:
    """The named topology (or the JSON file's) with ``functions`` service functions dealt to its switches
    (a JSON file's own functions stay; ``functions`` adds none to it)."""
    if functions < 0 or functions > 32:
        raise ModelError("functions", f"must be 0..32, got {functions}")
    kind, _, size = text.partition(":")
    if kind == "fat-tree":
        k = _number(size or "4", "topo", "fat-tree:K")
        if k < 2 or k % 2 or k * k * 5 // 4 > MAX_SWITCHES:
            raise ModelError("topo", f"fat-tree:K needs an even K from 2 to 6, got {k}")
        spec = fat_tree(k)
        _deal(spec, [name for name, sw in spec.switches.items() if sw.role == "edge"], functions)
        return spec
    if kind == "line":
        n = _number(size or "3", "topo", "line:N")
        if not 1 <= n <= MAX_SWITCHES:
            raise ModelError("topo", f"line:N needs N from 1 to {MAX_SWITCHES}, got {n}")
        spec = TopoSpec()
        for index in range(1, n + 1):
            spec.add_switch(f"s{index}", "edge", dpid=0x100 + index)
        for index in range(1, n):
            spec.add_link(f"s{index}", f"s{index + 1}")
        spec.add_host("h1", "s1")
        spec.add_host("h2", f"s{n}")
        _deal(spec, [f"s{index}" for index in range(2, n)] or ["s1"], functions)
        return spec
    if text == "tsn-fig7":
        spec = tsn_fig7()
        _deal(spec, list(spec.switches), functions)
        return spec
    if text.endswith(".json"):
        return from_json(_read(text))
    raise ModelError("topo", f"{text!r} is not fat-tree:K, line:N, tsn-fig7 or a .json file")


def from_json(document: Any) -> TopoSpec:
    """A topology from its JSON form (see the module); errors name the item and field."""
    if not isinstance(document, dict):
        raise ModelError("topo", "the file must hold a JSON object with switches, links, hosts and functions")
    spec = TopoSpec()
    for index, item in enumerate(_list(document, "switches")):
        where = f"switches[{index}]"
        role = item.get("role", "edge") if isinstance(item, dict) else None
        if role not in ("edge", "aggregation", "core"):
            raise ModelError(f"{where}.role", f"must be edge, aggregation or core, got {role!r}")
        spec.add_switch(_name(item, where), role, dpid=0x100 + index + 1)
    if not spec.switches or len(spec.switches) > MAX_SWITCHES:
        raise ModelError("switches", f"needs 1 to {MAX_SWITCHES} switches, got {len(spec.switches)}")
    for index, item in enumerate(_list(document, "links")):
        if not (isinstance(item, list) and len(item) == 2 and all(name in spec.switches for name in item)):
            raise ModelError(f"links[{index}]", f"must be a pair of known switch names, got {item!r}")
        spec.add_link(item[0], item[1])
    for kind in ("hosts", "functions"):
        for index, item in enumerate(_list(document, kind)):
            where = f"{kind}[{index}]"
            name, switch = _name(item, where), item.get("switch")
            if switch not in spec.switches:
                raise ModelError(f"{where}.switch", f"{switch!r} is not one of the switches")
            if name in spec.hosts or name in spec.functions or name in spec.switches:
                raise ModelError(f"{where}.name", f"{name!r} is taken")
            (spec.add_host if kind == "hosts" else spec.add_function)(name, switch)
    if len(spec.hosts) > 250:
        raise ModelError("hosts", f"at most 250 (one /24 of addresses), got {len(spec.hosts)}")
    return spec


def _deal(spec: TopoSpec, switches: list[str], functions: int) -> None:
    for index in range(functions):
        spec.add_function(f"v{index + 1}", switches[index % len(switches)])


def _number(text: str, field: str, form: str) -> int:
    if not text.isdigit():
        raise ModelError(field, f"{form} needs a whole number, got {text!r}")
    return int(text)


def _read(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except OSError as error:
        raise ModelError("topo", f"cannot read {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ModelError("topo", f"{path} is not JSON: {error.msg} at line {error.lineno}") from None


def _list(document: dict[str, Any], key: str) -> list[Any]:
    value = document.get(key, [])
    if not isinstance(value, list):
        raise ModelError(key, "must be a list")
    return value


def _name(item: Any, where: str) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    if not isinstance(name, str) or not name.isidentifier() or len(name) > 8:
        raise ModelError(f"{where}.name", f"must be a short name (letters, digits, _; at most 8), got {name!r}")
    return name
