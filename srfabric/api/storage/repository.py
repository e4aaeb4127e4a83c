"""Resources in and out of the database, as the public dicts the API returns.

The service keeps every resource in memory (``Snapshot``) and writes each change
through ``Repository`` in a transaction that it commits only after the data plane
confirmed the change. Loading uses the ORM; writing uses Core statements on a connection.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    Connection,
    Delete,
    Engine,
    Insert,
    Table,
    Update,
    bindparam,
    delete,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.orm import Session

from srfabric.api.storage.tables import (
    ChainClassifierRow,
    ChainGroupRow,
    FlowClassifierRow,
    GraphEdgeRow,
    LinkRow,
    PortChainRow,
    PortPairGroupRow,
    PortPairRow,
    PortRow,
    ScheduleRow,
    ServiceGraphRow,
    StreamRow,
    SwitchRow,
)
from srfabric.errors import SrfabricError

STREAM_COLUMNS = ("name", "description", "stream_id", "talker", "listener", "period_ns", "size_bytes",
                  "max_latency_ns", "priority", "udp_source_port", "udp_destination_port", "path", "slot", "phase",
                  "num_seamless_trees", "second_path")
Record = dict[str, Any]

FC_COLUMNS = ("name", "description", "ethertype", "protocol", "source_port_range_min", "source_port_range_max",
              "destination_port_range_min", "destination_port_range_max", "source_ip_prefix",
              "destination_ip_prefix", "logical_source_port", "logical_destination_port", "l7_parameters")


class NotLeading(SrfabricError):
    """A write fenced off: another instance leads now (``Repository.fence``)."""


@dataclass
class Snapshot:
    """Every resource by kind and id, in its public form."""

    resources: dict[str, dict[str, Record]] = field(default_factory=lambda: {kind: {} for kind in ROW_TYPES})
    links: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    switches: dict[int, tuple[str, str]] = field(default_factory=dict)
    duty_percent: int | None = None  # the gates' duty cycle (None: open in the streams' slots only)

    def __getitem__(self, kind: str) -> dict[str, Record]:
        return self.resources[kind]

    def copy(self) -> Snapshot:
        """A copy whose kind dicts can change without touching this one (records are replaced, never edited)."""
        return Snapshot({kind: dict(items) for kind, items in self.resources.items()}, dict(self.links),
                        dict(self.switches), self.duty_percent)


def _owned(row: Any) -> Record:
    return {"id": row.id, "name": row.name, "project_id": row.project_id, "tenant_id": row.project_id}


class Repository:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # A load reads one table after another. Under PostgreSQL's default isolation each statement sees the
        # commits made before it, so a load beside another instance's writes could hold a port chain whose
        # classifier it read before that was written: a load sees one moment (a follower loads while the leader
        # writes). SQLite's file has one writing instance, which does not load while it writes.
        self._reading = engine.execution_options(isolation_level="REPEATABLE READ") \
            if engine.dialect.name == "postgresql" else engine
        self._kept: Connection | None = None
        # Instances sharing a PostgreSQL database: the generation this one leads with. Every write transaction
        # first reads the leader row under a share lock and goes on only if it still holds this generation, so
        # a leader that lost the lock and has not noticed yet writes nothing (the next leader's update of the
        # row waits for such a transaction to end).
        self.fence: int | None = None

    def session(self) -> Session:
        """A session whose statements all see the database as it was at the first of them (``load``)."""
        return Session(self._reading, expire_on_commit=False)

    # -- loading -------------------------------------------------------------------------
    def load(self) -> Snapshot:
        snap = Snapshot()
        with self.session() as db:
            for port in db.scalars(select(PortRow)):
                snap["ports"][port.id] = {**_owned(port), "mac_address": port.mac_address,
                                          "fixed_ips": copy.deepcopy(port.fixed_ips), "device_owner": port.device_owner,
                                          "device_id": port.device_id,
                                          "binding:profile": copy.deepcopy(port.binding_profile),
                                          "status": "ACTIVE", "admin_state_up": True,
                                          "srfabric:discovered": port.discovered}
            for fc in db.scalars(select(FlowClassifierRow)):
                columns = {c: copy.deepcopy(getattr(fc, c)) for c in FC_COLUMNS}
                snap["flow_classifiers"][fc.id] = {**_owned(fc), **columns}
            pairs_of: dict[str, list[tuple[int, str]]] = {}
            for pp in db.scalars(select(PortPairRow)):
                snap["port_pairs"][pp.id] = {**_owned(pp), "description": pp.description, "ingress": pp.ingress,
                                             "egress": pp.egress,
                                             "service_function_parameters": dict(pp.service_function_parameters)}
                if pp.port_pair_group_id:
                    pairs_of.setdefault(pp.port_pair_group_id, []).append((pp.position, pp.id))
            for ppg in db.scalars(select(PortPairGroupRow)):
                snap["port_pair_groups"][ppg.id] = {
                    **_owned(ppg), "description": ppg.description, "group_id": ppg.group_id,
                    "port_pairs": [i for _, i in sorted(pairs_of.get(ppg.id, []))],
                    "port_pair_group_parameters": copy.deepcopy(ppg.port_pair_group_parameters),
                    "tap_enabled": ppg.tap_enabled}
            groups_of: dict[str, list[tuple[int, str]]] = {}
            for cg in db.scalars(select(ChainGroupRow)):
                groups_of.setdefault(cg.port_chain_id, []).append((cg.position, cg.port_pair_group_id))
            classifiers_of: dict[str, list[tuple[int, str]]] = {}
            for cc in db.scalars(select(ChainClassifierRow)):
                classifiers_of.setdefault(cc.port_chain_id, []).append((cc.position, cc.flow_classifier_id))
            for pc in db.scalars(select(PortChainRow)):
                snap["port_chains"][pc.id] = {
                    **_owned(pc), "description": pc.description, "chain_id": pc.chain_id,
                    "port_pair_groups": [i for _, i in sorted(groups_of.get(pc.id, []))],
                    "flow_classifiers": [i for _, i in sorted(classifiers_of.get(pc.id, []))],
                    "chain_parameters": dict(pc.chain_parameters)}
            edges: dict[str, dict[str, list[str]]] = {}
            for edge in db.scalars(select(GraphEdgeRow)):
                edges.setdefault(edge.service_graph_id, {}).setdefault(edge.src_chain_id, []).append(edge.dst_chain_id)
            for sg in db.scalars(select(ServiceGraphRow)):
                snap["service_graphs"][sg.id] = {**_owned(sg), "description": sg.description,
                                                 "port_chains": {k: sorted(v) for k, v in edges.get(sg.id, {}).items()}}
            for st in db.scalars(select(StreamRow)):
                columns = {c: copy.deepcopy(getattr(st, c)) for c in STREAM_COLUMNS}
                snap["streams"][st.id] = {**_owned(st), **columns}
            for link in db.scalars(select(LinkRow)):
                snap.links[(link.a_dpid, link.a_port)] = (link.b_dpid, link.b_port)
            for switch in db.scalars(select(SwitchRow)):
                snap.switches[switch.dpid] = (switch.name, switch.role)
            schedule = db.get(ScheduleRow, 1)
            snap.duty_percent = None if schedule is None else schedule.duty_percent
        return snap

    # -- writing (inside the caller's transaction) ---------------------------------------
    # Core statements built once, with the values as parameters: SQLAlchemy compiles each once and, as the
    # statement objects are kept, works out their cache keys once too. A kept connection spares the pool's
    # checkout and reset.
    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        """``connect`` and one transaction on it, fenced (see ``fence``): ``NotLeading`` if another instance
        leads now."""
        with self.connect() as db, db.begin():
            if self.fence is not None:
                held = db.execute(text("SELECT generation FROM leader WHERE id = 1 FOR SHARE")).scalar()
                if held != self.fence:
                    raise NotLeading("leader", f"generation {held} leads now, not this instance's {self.fence}")
            if db.dialect.name == "postgresql":  # delivered at commit: instances sharing the fabric load it again
                db.execute(text("NOTIFY srfabric_state"))
            yield db

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection for one transaction: the kept one, or a pooled one while the kept one is in use."""
        kept = self._kept
        if kept is None or kept.closed or kept.invalidated:
            kept = self._kept = self.engine.connect()
        if kept.in_transaction():  # its holder awaits the switches: this caller gets a connection of its own
            with self.engine.connect() as own:
                yield own
            return
        try:
            yield kept
        except BaseException:
            self.close()  # it may be broken (a restarted server): the next change connects anew
            raise

    def close(self) -> None:
        if self._kept is not None:
            self._kept.close()
            self._kept = None

    def save(self, db: Connection, kind: str, record: Record, created: bool = False) -> None:
        columns = getattr(self, f"_{kind}_columns")(record)
        if created:
            db.execute(_INSERT[kind], {"id": record["id"], **columns})
        else:
            db.execute(_UPDATE[kind], {"_id": record["id"], **columns})
        extra = getattr(self, f"_{kind}_associations", None)
        if extra is not None:
            extra(db, record, created)

    def delete(self, db: Connection, kind: str, ident: str) -> None:
        if kind == "port_pair_groups":
            db.execute(_UNGROUP_PAIRS, {"group": ident})
        if kind == "port_chains":
            db.execute(_DELETE_CHAIN_GROUPS, {"chain": ident})
            db.execute(_DELETE_CHAIN_CLASSIFIERS, {"chain": ident})
        if kind == "service_graphs":
            db.execute(_DELETE_GRAPH_EDGES, {"graph": ident})
        db.execute(_DELETE[kind], {"_id": ident})

    @staticmethod
    def _ports_columns(r: Record) -> dict[str, Any]:
        return {"project_id": r["project_id"], "name": r["name"], "mac_address": r["mac_address"],
                "fixed_ips": r["fixed_ips"], "device_owner": r["device_owner"], "device_id": r["device_id"],
                "binding_profile": r["binding:profile"], "discovered": r["srfabric:discovered"]}

    @staticmethod
    def _streams_columns(r: Record) -> dict[str, Any]:
        return {"project_id": r["project_id"], **{c: r[c] for c in STREAM_COLUMNS}}

    @staticmethod
    def _flow_classifiers_columns(r: Record) -> dict[str, Any]:
        return {"project_id": r["project_id"], **{c: r[c] for c in FC_COLUMNS}}

    @staticmethod
    def _port_pairs_columns(r: Record) -> dict[str, Any]:
        return {"project_id": r["project_id"], "name": r["name"], "description": r["description"],
                "ingress": r["ingress"], "egress": r["egress"],
                "service_function_parameters": r["service_function_parameters"]}

    @staticmethod
    def _port_pair_groups_columns(r: Record) -> dict[str, Any]:
        return {"group_id": r["group_id"], "project_id": r["project_id"], "name": r["name"],
                "description": r["description"], "port_pair_group_parameters": r["port_pair_group_parameters"],
                "tap_enabled": r["tap_enabled"]}

    @staticmethod
    def _port_pair_groups_associations(db: Connection, r: Record, created: bool) -> None:
        if not created:
            db.execute(_UNGROUP_PAIRS, {"group": r["id"]})
        if r["port_pairs"]:
            db.execute(_GROUP_PAIR, [{"pair": pair_id, "group": r["id"], "at": position}
                                     for position, pair_id in enumerate(r["port_pairs"])])

    @staticmethod
    def _port_chains_columns(r: Record) -> dict[str, Any]:
        return {"chain_id": r["chain_id"], "project_id": r["project_id"], "name": r["name"],
                "description": r["description"], "chain_parameters": r["chain_parameters"]}

    @staticmethod
    def _port_chains_associations(db: Connection, r: Record, created: bool) -> None:
        if not created:
            db.execute(_DELETE_CHAIN_GROUPS, {"chain": r["id"]})
            db.execute(_DELETE_CHAIN_CLASSIFIERS, {"chain": r["id"]})
        if r["port_pair_groups"]:
            db.execute(_INSERT_CHAIN_GROUP, [{"port_chain_id": r["id"], "position": i, "port_pair_group_id": g}
                                               for i, g in enumerate(r["port_pair_groups"])])
        if r["flow_classifiers"]:
            db.execute(_INSERT_CHAIN_CLASSIFIER, [{"port_chain_id": r["id"], "position": i,
                                                     "flow_classifier_id": f}
                                                    for i, f in enumerate(r["flow_classifiers"])])

    @staticmethod
    def _service_graphs_columns(r: Record) -> dict[str, Any]:
        return {"project_id": r["project_id"], "name": r["name"], "description": r["description"]}

    @staticmethod
    def _service_graphs_associations(db: Connection, r: Record, created: bool) -> None:
        if not created:
            db.execute(_DELETE_GRAPH_EDGES, {"graph": r["id"]})
        edges = [{"service_graph_id": r["id"], "src_chain_id": src, "dst_chain_id": dst}
                 for src, dsts in r["port_chains"].items() for dst in dsts]
        if edges:
            db.execute(_INSERT_GRAPH_EDGE, edges)

    def save_fabric(self, db: Connection, links: dict[tuple[int, int], tuple[int, int]],
                    switches: dict[int, tuple[str, str]]) -> None:
        """Replace the kept links and switches with the controller's current view."""
        db.execute(delete(LinkRow))
        if links:
            db.execute(insert(LinkRow), [{"a_dpid": a[0], "a_port": a[1], "b_dpid": b[0], "b_port": b[1]}
                                         for a, b in links.items()])
        db.execute(delete(SwitchRow))
        if switches:
            db.execute(insert(SwitchRow), [{"dpid": dpid, "name": name, "role": role}
                                           for dpid, (name, role) in switches.items()])

    def save_schedule(self, db: Connection, duty_percent: int | None) -> None:
        db.execute(delete(ScheduleRow))
        db.execute(insert(ScheduleRow), {"id": 1, "duty_percent": duty_percent})


def _update_by_id(table: Table) -> Update:
    """``UPDATE table SET <the columns given> WHERE id = :_id`` (the columns come with the parameters)."""
    return update(table).where(table.c.id == bindparam("_id"))


def _delete_by_id(table: Table) -> Delete:
    return delete(table).where(table.c.id == bindparam("_id"))


_UNGROUP_PAIRS = update(PortPairRow).where(PortPairRow.port_pair_group_id == bindparam("group")).values(
    port_pair_group_id=None)
_GROUP_PAIR = update(PortPairRow).where(PortPairRow.id == bindparam("pair")).values(
    port_pair_group_id=bindparam("group"), position=bindparam("at"))
_DELETE_CHAIN_GROUPS = delete(ChainGroupRow).where(ChainGroupRow.port_chain_id == bindparam("chain"))
_DELETE_CHAIN_CLASSIFIERS = delete(ChainClassifierRow).where(ChainClassifierRow.port_chain_id == bindparam("chain"))
_DELETE_GRAPH_EDGES = delete(GraphEdgeRow).where(GraphEdgeRow.service_graph_id == bindparam("graph"))


# Each resource kind's table, by collection: the kinds the store keeps (``resources.kinds`` declares the rest).
ROW_TYPES: dict[str, Any] = {"ports": PortRow, "flow_classifiers": FlowClassifierRow, "port_pairs": PortPairRow,
                             "port_pair_groups": PortPairGroupRow, "port_chains": PortChainRow,
                             "service_graphs": ServiceGraphRow, "streams": StreamRow}
_INSERT: dict[str, Insert] = {kind: insert(row.__table__) for kind, row in ROW_TYPES.items()}
_UPDATE: dict[str, Update] = {kind: _update_by_id(row.__table__) for kind, row in ROW_TYPES.items()}
_DELETE: dict[str, Delete] = {kind: _delete_by_id(row.__table__) for kind, row in ROW_TYPES.items()}
_INSERT_CHAIN_GROUP = insert(ChainGroupRow)
_INSERT_CHAIN_CLASSIFIER = insert(ChainClassifierRow)
_INSERT_GRAPH_EDGE = insert(GraphEdgeRow)
