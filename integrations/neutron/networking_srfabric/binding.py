"""Where a Neutron port sits on the fabric, for the ML2 driver's binding: the switch and port its
``binding:profile`` names (a service function's ports, which never send to learn from), else those of the host
srfabric learned with the port's MAC address (from ARP or Neighbour Discovery at the edge).

>>> fabric = {"fabric": {"hosts": [{"name": "h1", "mac": "02:00:00:00:00:01", "dpid": 257, "port": 1}]}}
>>> attachment({"mac_address": "02:00:00:00:00:01"}, fabric)
(257, 1)
>>> attachment({"mac_address": "02:00:00:00:00:09", "binding:profile": {"switch": "s2", "port": "3"}}, fabric)
('s2', '3')
>>> attachment({"mac_address": "02:00:00:00:00:09"}, fabric) is None
True
"""

from __future__ import annotations

import http.client
from typing import Any

from networking_srfabric.sender import Call

FABRIC = "/v2.0/srfabric/fabric"


def attachment(port: dict[str, Any], fabric: dict[str, Any] | None) -> tuple[Any, Any] | None:
    """(switch, port) for ``port`` (Neutron's dict), or None when neither its profile nor srfabric places it."""
    profile = port.get("binding:profile") or {}
    if "switch" in profile and "port" in profile:
        return profile["switch"], profile["port"]
    mac = str(port.get("mac_address") or "").lower()
    for host in ((fabric or {}).get("fabric") or {}).get("hosts", []):
        if isinstance(host, dict) and str(host.get("mac", "")).lower() == mac:
            return host.get("dpid"), host.get("port")
    return None


def learned_fabric(call: Call) -> dict[str, Any] | None:
    """srfabric's view of the fabric, or None when it cannot be had now (a port bound later is bound then)."""
    try:
        status, answer = call("GET", FABRIC, None)
    except (OSError, http.client.HTTPException):
        return None
    return answer if status == 200 else None
