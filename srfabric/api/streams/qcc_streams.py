"""A stream asked for in IEEE 802.1Qcc's form (``qcc``) through the API: its end stations found by MAC among the
ports, admitted as any stream is (``SfcService.create``), and answered with the status group; a request srfabric
cannot meet is refused (409) with the Table 46-15 failure code beside Neutron's error. The stream's name is its
Qcc stream-id, so one stream-id is one stream."""

from __future__ import annotations

from typing import Any

from srfabric.api.errors import ApiError, bad_request, in_use
from srfabric.api.service import SfcService
from srfabric.api.streams import qcc

MAX_FRAME_BYTES = 9000  # the largest frame the fabric's links carry (jumbo)


def is_qcc(body: Any) -> bool:
    """Whether a create body is the Qcc form (``{"stream": {"stream-id": ..., "talker": {...}, ...}}``)."""
    return isinstance(body, dict) and isinstance(body.get("stream"), dict) and "stream-id" in body["stream"]


async def create(service: SfcService, document: Any, project: str | None = None) -> dict[str, Any]:
    """Admit ``document``'s stream; ``project``: a member's, whose own ports alone it may name."""
    asked = qcc.parse(document)
    if asked.size_bytes > MAX_FRAME_BYTES:
        raise qcc.refusal(in_use("StreamNotAdmitted", f"talker.traffic-specification.max-frame-size: "
                                                      f"{asked.size_bytes} bytes, over the {MAX_FRAME_BYTES} the "
                                                      f"links carry"), "size_bytes")
    if asked.seamless_trees > 2:
        raise qcc.refusal(in_use("StreamNotAdmitted", f"user-to-network-requirements.num-seamless-trees: "
                                                      f"{asked.seamless_trees} trees: srfabric replicates each "
                                                      "frame (802.1CB) along at most 2; ask for 1 or 2"), "trees")
    mine = {} if project is None else {"project_id": [project]}
    ports = {str(p.get("mac_address") or "").lower(): p["id"] for p in service.find_all("ports", mine, [])}
    ends = {}
    for role, mac, where in (("talker", asked.talker_mac, "talker"), ("listener", asked.listener_mac, "listeners[0]")):
        if mac not in ports:
            raise bad_request(f"{where}.end-station-interfaces[0].mac-address: no port of the fabric has {mac}")
        ends[role] = ports[mac]
    if service.find_all("streams", {"name": [asked.stream_id]}, []):
        raise qcc.refusal(in_use("StreamIdInUse", f"stream-id: {asked.stream_id} names an admitted stream"),
                          "StreamIdInUse")
    body = {"name": asked.stream_id, **ends, **({} if project is None else {"project_id": project}),
            "period_ns": asked.period_ns, "size_bytes": asked.size_bytes,
            "max_latency_ns": asked.max_latency_ns, "priority": asked.priority,
            "udp_source_port": asked.udp_source_port, "udp_destination_port": asked.udp_destination_port,
            "num_seamless_trees": asked.seamless_trees}
    try:
        record = await service.create("streams", body)
    except ApiError as error:
        if error.status != 409 or "status" in error.extra:  # a class stream's refusal carries its own code
            raise
        cause = error.kind if error.kind in qcc.REFUSAL_CODES else error.message.split(":", 1)[0]
        raise qcc.refusal(error, cause) from None
    latency, offset = service.streams.bounds(record)
    return {"stream": record, "status": qcc.status(asked, latency, offset)}
