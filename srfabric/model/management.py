"""How srfabric reaches each TSN bridge's management plane: a NETCONF server's address, port and credentials,
from the bridges file (``srfabric serve --gates netconf --bridges FILE``). Credentials never leave this object:
views show address and user only.

Examples
--------
>>> bridges = read_bridges({"bridges": {"s1": {"host": "10.0.9.1", "username": "root", "key_file": "/k"}}})
>>> bridges["s1"].port, bridges["s1"].public()
(830, {'host': '10.0.9.1', 'port': 830, 'username': 'root'})
>>> read_bridges({"bridges": {"s1": {"host": "10.0.9.1", "username": "root", "port": 0}}})
Traceback (most recent call last):
srfabric.errors.ModelError: bridges.s1.port: must be an integer in 1..65535, got 0
>>> read_bridges({"bridges": {"s1": bridges["s1"].entry()}}) == bridges
True
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from srfabric.errors import ModelError

FIELDS = {"host", "port", "username", "password", "key_file", "timeout_s"}


@dataclass(frozen=True)
class BridgeAccess:
    """One bridge's NETCONF server (SSH): ``password`` or ``key_file`` (or the SSH agent's keys)."""

    name: str
    host: str
    username: str
    port: int = 830
    password: str | None = None
    key_file: str | None = None
    timeout_s: float = 5.0

    def public(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port, "username": self.username}

    def entry(self) -> dict[str, Any]:
        """The bridges file's entry for this bridge (what ``read_bridges`` reads back)."""
        secret = {key: value for key, value in (("password", self.password), ("key_file", self.key_file)) if value}
        return {**self.public(), **secret, "timeout_s": self.timeout_s}


def _text(where: str, value: Any, limit: int = 255) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= limit:
        raise ModelError(where, f"must be a string of 1..{limit} characters, got {value!r}")
    return value


def _host(where: str, value: Any) -> str:
    """An IP address or a DNS name a resolver takes (labels of 1..63 characters, IDNA)."""
    host = _text(where, value)
    try:
        labels = host.encode("idna").rstrip(b".").split(b".")
    except UnicodeError:
        labels = [b""]
    if not all(0 < len(label) <= 63 and label.isascii() for label in labels):
        raise ModelError(where, f"must be an IP address or a host name of labels of 1..63 characters, "
                                f"got {host[:80]!r}")
    return host


def _access(name: str, entry: Any) -> BridgeAccess:
    where = f"bridges.{name}"
    if not isinstance(entry, dict):
        raise ModelError(where, "must be an object with host, username and port, password or key_file")
    unknown = sorted(set(entry) - FIELDS)
    if unknown:
        raise ModelError(f"{where}.{unknown[0]}", f"is not a field; the fields are {sorted(FIELDS)}")
    port = entry.get("port", 830)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ModelError(f"{where}.port", f"must be an integer in 1..65535, got {port!r}")
    timeout = entry.get("timeout_s", 5.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 120:
        raise ModelError(f"{where}.timeout_s", f"must be a number of seconds in (0, 120], got {timeout!r}")
    secret = {key: _text(f"{where}.{key}", entry[key], 4096) for key in ("password", "key_file") if key in entry}
    return BridgeAccess(_text(f"{where} name", name, 64), _host(f"{where}.host", entry.get("host")),
                        _text(f"{where}.username", entry.get("username"), 64), port, secret.get("password"),
                        secret.get("key_file"), float(timeout))


def read_bridges(document: Any) -> dict[str, BridgeAccess]:
    """Every bridge of a bridges document (``{"bridges": {name: {...}}}``); ``ModelError`` names the field."""
    if not isinstance(document, dict) or not isinstance(document.get("bridges"), dict):
        raise ModelError("bridges", "must be an object {\"bridges\": {name: {host, port, username, ...}}}")
    if len(document["bridges"]) > 4096:
        raise ModelError("bridges", f"{len(document['bridges'])} bridges, over the 4096 one file may name")
    return {name: _access(name, entry) for name, entry in document["bridges"].items()}


def read_bridges_file(path: Path) -> dict[str, BridgeAccess]:
    """The bridges file at ``path`` (JSON); errors name the file and the field."""
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ModelError(str(path), f"not a readable JSON bridges file: {error}") from None
    return read_bridges(document)


def write_bridges_file(path: Path, bridges: dict[str, BridgeAccess]) -> None:
    """``bridges`` into the file at ``path``, whole or not at all (a new file renamed over the old), readable by
    its owner only: it may hold passwords."""
    document = {"bridges": {name: bridges[name].entry() for name in sorted(bridges)}}
    temporary = path.with_name(f".{path.name}.new")
    temporary.unlink(missing_ok=True)  # a leftover keeps its own mode; this one is made 0600
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump(document, file, indent=2)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
