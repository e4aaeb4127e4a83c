"""The bridges' NETCONF access as the API writes it (``PUT``/``DELETE /v2.0/srfabric/bridges/{name}``), with
``srfabric serve --gates netconf --bridges FILE``: each change goes into the bridges file first (so a restart
reads it) and then into the gates adapter, under the service's lock, so no stream change runs meanwhile. A new
or moved bridge's capabilities are read again at the bridges' watch's next pass (until then the bridge's own
validation of each edit is the guard), and a bridge that runs lists gets them on its new server at that pass. A
bridge that runs the lists of admitted streams is not removed (409)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from srfabric.api.errors import ApiError, bad_request, in_use, not_found
from srfabric.api.service import SfcService
from srfabric.errors import ModelError
from srfabric.model.management import BridgeAccess, read_bridges, write_bridges_file
from srfabric.southbound.netconf.gates import NetconfGates

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def not_netconf() -> ApiError:
    return in_use("BridgesNotManaged", "bridges are written only when srfabric serve runs --gates netconf "
                                       "--bridges FILE")


class BridgeBook:
    """``gates``' bridges, kept in ``path``."""

    def __init__(self, service: SfcService, gates: NetconfGates, path: Path) -> None:
        self.service = service
        self.gates = gates
        self.path = path

    def accesses(self) -> dict[str, BridgeAccess]:
        return {name: session.access for name, session in self.gates.sessions.items()}

    async def put(self, name: str, entry: Any) -> tuple[int, dict[str, Any]]:
        """Add or change one bridge's access: 201 when new, 200 when changed; 400 naming the field."""
        access = _checked(name, entry)
        async with self.service.lock:
            known = self.accesses()
            _save(self.path, {**known, name: access})
            old = self.gates.put(access)
            if known.get(name) != access:
                self.service.streams.planning.capabilities.pop(name, None)  # its server may differ: read again
        if old is not None:
            await asyncio.to_thread(old.close)  # a dead server's goodbye waits out its timeout, blocking nothing
        return (200 if name in known else 201), bridge_view(self.service, name)

    async def delete(self, name: str) -> None:
        """Forget one bridge: 404 when unknown, 409 while it runs admitted streams' lists."""
        async with self.service.lock:
            known = self.accesses()
            if name not in known:
                raise not_found("Bridge", "bridge", name)
            wanted = self.service.streams.gcls  # what the admitted streams need, sent or not yet
            held = self.gates.holding(name, wanted)
            if held is not None:
                raise in_use("BridgeInUse", str(held))
            _save(self.path, {other: access for other, access in known.items() if other != name})
            session = self.gates.remove(name, wanted)
            self.service.streams.planning.capabilities.pop(name, None)
        if session is not None:
            await asyncio.to_thread(session.close)


def bridge_view(service: SfcService, name: str | None = None) -> dict[str, Any]:
    """Every bridge (or ``name``'s) as the fabric view shows it; 404 for a bridge not known."""
    bridges = service.streams.bridges_view()
    if name is None:
        return {"bridges": bridges}
    if name not in bridges:
        raise not_found("Bridge", "bridge", name)
    return {"bridge": {"name": name, **bridges[name]}}


def book_of(service: SfcService, path: Path | None) -> BridgeBook | None:
    """With ``--gates netconf --bridges FILE``: the bridges the API may add, change and forget; else None."""
    gates = service.streams.installer.gates
    return BridgeBook(service, gates, path) if isinstance(gates, NetconfGates) and path is not None else None


def _checked(name: str, entry: Any) -> BridgeAccess:
    if not NAME.fullmatch(name):
        raise bad_request(f"bridge name: must be 1..64 letters, digits, '.', '_' or '-' (a switch's name), got "
                          f"{name[:80]!r}")
    if not isinstance(entry, dict) or set(entry) != {"bridge"}:
        raise bad_request("body: must be {\"bridge\": {host, port, username, password or key_file, timeout_s}}")
    try:
        return read_bridges({"bridges": {name: entry["bridge"]}})[name]
    except ModelError as error:
        raise bad_request(str(error)) from None


def _save(path: Path, bridges: dict[str, BridgeAccess]) -> None:
    try:
        write_bridges_file(path, bridges)
    except OSError as error:
        raise ApiError(500, "BridgesNotSaved", f"bridges file {path}: not written ({error.strerror}); nothing "
                                               "changed") from None
