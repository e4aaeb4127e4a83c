"""Topology and flow files in srfabric's JSON form; every error names the field at fault.

Examples
--------
>>> net = network_from_json({"nodes": [{"id": "h1", "kind": "host"}, {"id": "s1", "kind": "switch"}],
...                          "links": [{"a": "h1", "b": "s1", "rate_bps": 1000000000}]})
>>> net.edges
[('h1', 's1'), ('s1', 'h1')]
>>> streams_from_json({"flows": [{"id": "f1", "src": "h1", "dst": "h2", "period_ns": 0}]})
Traceback (most recent call last):
...
srfabric.errors.ModelError: flows[0].period_ns: must be an integer > 0, got 0
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError
from srfabric.tsn.model.network import NODE_KINDS, Link, Network, Stream


def read_text(path: str | Path, what: str) -> str:
    """A file's text; a missing or unreadable file is a :class:`ModelError` naming ``what``."""
    try:
        return Path(path).read_text()
    except OSError as error:
        raise ModelError(what, f"cannot read {path}: {error.strerror}") from None


def read_json(path: str | Path, what: str) -> Any:
    """Parse a JSON file; a missing or malformed file is a :class:`ModelError` naming ``what``."""
    try:
        return json.loads(read_text(path, what))
    except json.JSONDecodeError as error:
        raise ModelError(what, f"{path} is not JSON (line {error.lineno}: {error.msg})") from None


def _field(item: Any, where: str, name: str, kind: type, default: Any = ..., positive: bool = False) -> Any:
    if not isinstance(item, dict):
        raise ModelError(where, "must be an object")
    if name not in item:
        if default is ...:
            raise ModelError(f"{where}.{name}", "is required")
        return default
    value = item[name]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int) or (positive and value <= 0)):
        raise ModelError(f"{where}.{name}", f"must be an integer{' > 0' if positive else ''}, got {value!r}")
    if kind is str and (not isinstance(value, str) or not value):
        raise ModelError(f"{where}.{name}", f"must be a non-empty string, got {value!r}")
    return value


def network_from_json(document: Any) -> Network:
    """Build a :class:`Network` from ``{"nodes": [...], "links": [...]}``."""
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise ModelError("nodes", "the topology must be an object with a list of nodes")
    if not isinstance(document.get("links"), list):
        raise ModelError("links", "the topology must have a list of links")
    kinds: dict[str, str] = {}
    for index, node in enumerate(document["nodes"]):
        where = f"nodes[{index}]"
        if not isinstance(node, dict):
            raise ModelError(where, "must be an object")
        name = _field(node, where, "id", str)
        kind = _field(node, where, "kind", str)
        if kind not in NODE_KINDS:
            raise ModelError(f"{where}.kind", f"must be one of {', '.join(NODE_KINDS)}, got {kind!r}")
        if name in kinds:
            raise ModelError(f"{where}.id", f"{name!r} is used twice")
        kinds[name] = kind
    network = Network(kinds=kinds)
    for index, link in enumerate(document["links"]):
        where = f"links[{index}]"
        network.add_link(
            Link(
                _field(link, where, "a", str),
                _field(link, where, "b", str),
                _field(link, where, "rate_bps", int, 1_000_000_000, positive=True),
                _field(link, where, "t_proc_ns", int, 1000),
                _field(link, where, "t_prop_ns", int, 50),
                _field(link, where, "a_port", int, 0),
                _field(link, where, "b_port", int, 0),
            )
        )
    network.validate()
    return network


def streams_from_json(document: Any) -> list[Stream]:
    """Read ``{"flows": [...]}`` into streams (not yet checked against a topology)."""
    if not isinstance(document, dict) or not isinstance(document.get("flows"), list):
        raise ModelError("flows", "the flow file must be an object with a list of flows")
    streams = []
    for index, flow in enumerate(document["flows"]):
        where = f"flows[{index}]"
        if not isinstance(flow, dict):
            raise ModelError(where, "must be an object")
        deadline = _field(flow, where, "deadline_ns", int, None, positive=True)
        streams.append(
            Stream(
                str(_field(flow, where, "id", str)),
                _field(flow, where, "src", str),
                _field(flow, where, "dst", str),
                _field(flow, where, "period_ns", int, 1_000_000, positive=True),
                _field(flow, where, "size_bytes", int, 1500, positive=True),
                deadline,
            )
        )
    return streams


def network_to_json(network: Network) -> dict[str, Any]:
    """The inverse of :func:`network_from_json`."""
    return {
        "nodes": [{"id": name, "kind": kind} for name, kind in network.kinds.items()],
        "links": [
            {"a": lk.a, "b": lk.b, "rate_bps": lk.rate_bps, "t_proc_ns": lk.t_proc_ns, "t_prop_ns": lk.t_prop_ns,
             "a_port": lk.a_port, "b_port": lk.b_port}
            for lk in network.links
        ],
    }


def streams_to_json(streams: list[Stream]) -> dict[str, Any]:
    """The inverse of :func:`streams_from_json`."""
    return {
        "flows": [
            {"id": s.id, "src": s.src, "dst": s.dst, "period_ns": s.period_ns, "size_bytes": s.size_bytes}
            | ({"deadline_ns": s.deadline_ns} if s.deadline_ns is not None else {})
            for s in streams
        ]
    }
