"""The API's rules for streams on the snapshot: ports exist, ids are free. Pure (admission is ``streams``)."""

from __future__ import annotations

from typing import Any

from srfabric.api.errors import bad_request, in_use
from srfabric.api.resources.common import find, owned, renamed
from srfabric.api.storage.repository import Record, Snapshot

MAX_STREAM_ID = 65535


def create_stream(snap: Snapshot, body: dict[str, Any], project: str) -> Record:
    for role in ("talker", "listener"):
        find(snap, "ports", body[role])
    if body["talker"] == body["listener"]:
        raise bad_request("listener: must be another port than the talker.")
    used = {st["stream_id"] for st in snap["streams"].values()}
    stream_id = next((i for i in range(1, MAX_STREAM_ID + 1) if i not in used), 0)
    if stream_id == 0:
        raise in_use("StreamUnavailableId", f"stream_id: no id is free in 1..{MAX_STREAM_ID}.")
    record = {**owned(snap, "streams", body, project),
              "description": body.get("description") or "", "stream_id": stream_id,
              "talker": body["talker"], "listener": body["listener"],
              "period_ns": body.get("period_ns") or 1_000_000, "size_bytes": body.get("size_bytes") or 100,
              "max_latency_ns": body.get("max_latency_ns"), "priority": body.get("priority", 7),
              "udp_source_port": body.get("udp_source_port"),
              "udp_destination_port": body.get("udp_destination_port"),
              "path": list(body.get("path") or []), "slot": None, "phase": None,
              "num_seamless_trees": body.get("num_seamless_trees") or 1,
              "second_path": list(body.get("second_path") or [])}
    if record["second_path"] and record["num_seamless_trees"] != 2:
        raise bad_request("second_path: only a stream with num_seamless_trees 2 has a second path.")
    snap["streams"][record["id"]] = record
    return record


def update_stream(snap: Snapshot, ident: str, body: dict[str, Any]) -> Record:
    record = renamed(snap, "streams", ident, body)
    if body.get("path") is not None and record.get("num_seamless_trees", 1) > 1:
        raise bad_request("path: a redundant stream's two paths are chosen together; delete it and create it "
                          "with the paths you want (path and second_path).")
    if body.get("path") is not None:
        record["path"] = list(body["path"])
    return record


def delete_stream(snap: Snapshot, ident: str) -> None:
    find(snap, "streams", ident)
    del snap["streams"][ident]
