"""The documents OpenStack SDKs and Neutron clients read before anything else, as Neutron answers them.

``GET /`` lists the API versions (no token, as Neutron's version document is
served outside its authentication); ``GET /v2.0/`` lists the core resources
(here the one core resource srfabric serves, ``ports``); ``GET /v2.0/extensions``
lists the extensions by alias, and ``GET /v2.0/extensions/{alias}`` shows one.
networking-sfc's three keep their names, aliases and dates so a client that
checks for ``sfc``, ``flow_classifier`` or ``sfc_graphs`` finds them; srfabric's
own resources (streams, the fabric view, the gate schedule) are the ``srfabric``
extension.

Examples
--------
>>> versions("http://api:9696")["versions"][0]["links"][0]["href"]
'http://api:9696/v2.0/'
>>> [e["alias"] for e in extensions()["extensions"]]
['flow_classifier', 'sfc', 'sfc_graphs', 'srfabric']
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from srfabric.api.errors import ApiError


@dataclass(frozen=True)
class Extension:
    """One entry of Neutron's extension list."""

    alias: str
    name: str
    description: str
    updated: str
    links: list[str] = field(default_factory=list)


EXTENSIONS = (
    Extension("flow_classifier", "Flow Classifier", "Flow Classifier Extension.", "2015-10-05T10:00:00-00:00"),
    Extension("sfc", "Service Function Chaining", "Service Function Chain extension.", "2015-10-05T10:00:00-00:00"),
    Extension("sfc_graphs", "Service Graph", "Service Graph extension.", "2017-09-20T00:00:00-00:00"),
    Extension("srfabric", "srfabric", "Time-sensitive streams (/v2.0/srfabric/streams), the discovered fabric "
              "(/v2.0/srfabric/fabric) and the gate schedule (/v2.0/srfabric/schedule) of a source-routed fabric.",
              "2026-11-01T00:00:00-00:00"),
)
CORE_RESOURCES = (("port", "ports"),)  # Neutron's /v2.0/ lists core resources; extensions list the rest


def versions(base_url: str) -> dict[str, Any]:
    """``GET /``: the one version, v2.0, current."""
    return {"versions": [{"id": "v2.0", "status": "CURRENT",
                          "links": [{"href": f"{base_url.rstrip('/')}/v2.0/", "rel": "self"}]}]}


def index(base_url: str) -> dict[str, Any]:
    """``GET /v2.0/``: the core resources and where they are."""
    root = f"{base_url.rstrip('/')}/v2.0"
    return {"resources": [{"name": name, "collection": collection,
                           "links": [{"href": f"{root}/{collection}", "rel": "self"}]}
                          for name, collection in CORE_RESOURCES]}


def extensions() -> dict[str, Any]:
    """``GET /v2.0/extensions``."""
    return {"extensions": [asdict(extension) for extension in EXTENSIONS]}


def extension(alias: str) -> dict[str, Any]:
    """``GET /v2.0/extensions/{alias}``; 404 naming the alias when srfabric has no such extension."""
    for found in EXTENSIONS:
        if found.alias == alias:
            return {"extension": asdict(found)}
    raise ApiError(404, "ExtensionNotFound", f"Extension with alias {alias} does not exist")
