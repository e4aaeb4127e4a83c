"""An edge's per-stream filtering and policing sent to its bridge over NETCONF (``srfabric psfp push``): the
streams the bridge holds are read, then the edge's document (the API's ``GET /v2.0/srfabric/psfp/{switch}``)
goes in as one edit, with what the bridge holds and the edge has not removed (srfabric keeps the bridge's PSFP
tables: they become the edge's), into the candidate datastore and a
confirmed commit, confirmed once it is in. The bridge's server validates the edit against the published modules
and the limits it holds (``startup_psfp``); a refusal names the bridge, and the bridge keeps what it held."""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass
from typing import Any

from srfabric.errors import SrfabricError
from srfabric.rules.yang.psfp_document import COMPONENT, SID
from srfabric.rules.yang.psfp_netconf import REPLACED, Held, held_filter, held_psfp, psfp_edit
from srfabric.rules.yang.xml_document import to_config
from srfabric.southbound.netconf.session import BridgeSession

__all__ = ["Pushed", "held_streams", "push_psfp"]


@dataclass(frozen=True)
class Pushed:
    """What one push did: the bridge, the streams it now holds and those it no longer does (handles)."""

    bridge: str
    streams: list[int]
    removed: list[int]


def held_streams(session: BridgeSession, bridge: str, component: str = COMPONENT) -> Held:
    """What the bridge's running datastore holds of PSFP: its identities, and its bridge ``bridge``'s
    ``component``'s tables (``ModelError`` when it has none such)."""
    wanted = held_filter(bridge, component)  # ncclient makes a list of selections one subtree filter
    return held_psfp(session.call("get-config", lambda s: s.get_config("running", filter=wanted).data_xml),
                     session.name, bridge, component)


def push_psfp(session: BridgeSession, document: dict[str, Any], confirm_timeout_s: int = 30) -> Pushed:
    """``document`` (``psfp_document``'s) onto the bridge ``session`` reaches, in a confirmed commit."""
    named = document["ieee802-dot1q-bridge:bridges"]["bridge"][0]
    held = held_streams(session, named["name"], named["component"][0]["name"])
    edit = psfp_edit(document, held)
    token = uuid.uuid4().hex
    try:
        session.edit_and_commit(to_config(edit, REPLACED), token, confirm_timeout_s)
    except SrfabricError:
        with contextlib.suppress(SrfabricError):
            session.discard()  # the candidate back to what runs: the next edit starts clean
        raise
    session.confirm(token)  # unconfirmed, the bridge rolls back by itself when its timeout ends
    streams = sorted(identity["handle"] for identity in document.get(f"{SID}:stream-identity", []))
    return Pushed(session.name, streams, sorted(held.handles - set(streams)))
