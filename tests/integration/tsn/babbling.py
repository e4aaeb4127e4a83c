"""What the PSFP tests on a live fabric share: one time-triggered stream from h1 to h3 made through the API, its
edge, and its talker babbling at ten times its reservation (numbered UDP frames from a raw socket)."""

from __future__ import annotations

import math
from typing import Any

from srfabric.cli.client import SfcClient
from srfabric_tools.testbed.api_lab import ApiLab
from srfabric_tools.testbed.frer_traffic import NumberedUdp

PERIOD_NS, SECONDS, TIMES, SIZE, PORT = 1_000_000, 2, 10, 100, 6000
FRAMES = SECONDS * TIMES * 1_000_000_000 // PERIOD_NS  # ten times the stream's one frame per period


def protected_stream(client: SfcClient, lab: ApiLab) -> tuple[dict[str, Any], str]:
    """The stream made (one frame of ``SIZE`` octets per period) and the one edge that protects it."""
    made = client.create("streams", {"talker": lab.ports["h1"], "listener": lab.ports["h3"], "priority": 7,
                                     "period_ns": PERIOD_NS, "size_bytes": SIZE, "udp_destination_port": PORT})
    [edge_view] = client.get("/v2.0/srfabric/psfp")["edges"]
    assert edge_view["streams"] == [made["stream_id"]]
    return made, edge_view["bridge"]


def babble(lab: ApiLab) -> tuple[list[Any], int]:
    """``FRAMES`` frames at ten times the stream's rate; what its listener received, and the stream's reservation
    in frames over the time its talker took to send them (one per period and the bucket of two): a busy host sends
    more slowly than it asked for, and a meter lets through one frame a period for as long as it takes."""
    babbler = NumberedUdp(lab, "babbler", "h1", "h3", PORT, FRAMES, TIMES * 1_000_000_000 // PERIOD_NS, tagged=False)
    babbler.listen()
    babbler.talk()
    received = babbler.received(timeout=60)
    reserved = math.ceil(babbler.talked() * 1_000_000_000 / PERIOD_NS) + 2
    return received, max(reserved, SECONDS * 1_000_000_000 // PERIOD_NS + 2)
