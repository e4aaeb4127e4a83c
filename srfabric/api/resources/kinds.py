"""Every networking-sfc resource kind srfabric serves, declared once: where it lives (URL prefix and collection),
its member's name, its request schemas, its checks (create, update, delete on a copy of the snapshot), whether
its changes always reach the controller, and its table. The router, the OpenAPI routes and the service read
:data:`KINDS`; nothing else lists the kinds.

Examples
--------
>>> KINDS["port_pairs"].path, KINDS["port_pairs"].member, KINDS["port_pairs"].steering
('/v2.0/sfc/port_pairs', 'port_pair', True)
>>> sorted(kind.collection for kind in KINDS.values() if kind.prefix == "/v2.0")
['ports']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from srfabric.api.resources import chain_checks, checks, schemas, stream_checks
from srfabric.api.storage.repository import ROW_TYPES, Record, Snapshot

Create = Callable[[Snapshot, dict[str, Any], str], Record]
Update = Callable[[Snapshot, str, dict[str, Any]], Record]
Delete = Callable[[Snapshot, str], None]


@dataclass(frozen=True)
class ResourceKind:
    """One resource kind: its URL, names, schemas, checks and table."""

    collection: str
    member: str
    prefix: str
    create_schema: type[BaseModel]
    update_schema: type[BaseModel]
    create: Create
    update: Update
    delete: Delete
    # Changes of a steering kind always reach the controller: chains, and port pairs (their ports become trusted
    # service-function ports at once, so that a later chain update changes only the ingress switch).
    steering: bool = False
    create_body: type[BaseModel] = field(init=False, repr=False)  # the schema wrapped as {member: {...}}
    update_body: type[BaseModel] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "create_body", schemas.body(self.member, self.create_schema))
        object.__setattr__(self, "update_body", schemas.body(self.member, self.update_schema))

    @property
    def path(self) -> str:
        return f"{self.prefix}/{self.collection}"

    @property
    def row(self) -> Any:
        """Its table's row type (``storage.tables``)."""
        return ROW_TYPES[self.collection]


KINDS: dict[str, ResourceKind] = {kind.collection: kind for kind in (
    ResourceKind("ports", "port", "/v2.0", schemas.PortCreate, schemas.PortUpdate,
                 checks.create_port, checks.update_port, checks.delete_port),
    ResourceKind("flow_classifiers", "flow_classifier", "/v2.0/sfc", schemas.FlowClassifierCreate,
                 schemas.FlowClassifierUpdate, checks.create_flow_classifier, checks.update_flow_classifier,
                 checks.delete_flow_classifier),
    ResourceKind("port_pairs", "port_pair", "/v2.0/sfc", schemas.PortPairCreate, schemas.PortPairUpdate,
                 checks.create_port_pair, checks.update_port_pair, checks.delete_port_pair, steering=True),
    ResourceKind("port_pair_groups", "port_pair_group", "/v2.0/sfc", schemas.PortPairGroupCreate,
                 schemas.PortPairGroupUpdate, checks.create_port_pair_group, checks.update_port_pair_group,
                 checks.delete_port_pair_group),
    ResourceKind("port_chains", "port_chain", "/v2.0/sfc", schemas.PortChainCreate, schemas.PortChainUpdate,
                 chain_checks.create_port_chain, chain_checks.update_port_chain, chain_checks.delete_port_chain,
                 steering=True),
    ResourceKind("service_graphs", "service_graph", "/v2.0/sfc", schemas.ServiceGraphCreate,
                 schemas.ServiceGraphUpdate, chain_checks.create_service_graph, chain_checks.update_service_graph,
                 chain_checks.delete_service_graph, steering=True),
    ResourceKind("streams", "stream", "/v2.0/srfabric", schemas.StreamCreate, schemas.StreamUpdate,
                 stream_checks.create_stream, stream_checks.update_stream, stream_checks.delete_stream),
)}
