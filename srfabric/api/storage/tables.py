"""The API's tables (SQLAlchemy 2). Alembic migrations under ``migrations/`` create and change them.

Resources keep networking-sfc's field names; lists that networking-sfc keeps in
association tables (a chain's groups in order, its classifiers, a group's
pairs, a graph's edges) are association tables here too.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ID = String(36)
NAME = String(255)


class Base(DeclarativeBase):
    pass


class Owned:
    """Every resource's id, owner and name."""

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    project_id: Mapped[str] = mapped_column(NAME, default="")
    name: Mapped[str] = mapped_column(NAME, default="")


class Described(Owned):
    description: Mapped[str] = mapped_column(NAME, default="")


class PortRow(Owned, Base):
    __tablename__ = "ports"
    mac_address: Mapped[str] = mapped_column(String(17), default="")
    fixed_ips: Mapped[list[Any]] = mapped_column(JSON, default=list)
    device_owner: Mapped[str] = mapped_column(NAME, default="")
    device_id: Mapped[str] = mapped_column(NAME, default="")
    binding_profile: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    discovered: Mapped[bool] = mapped_column(Boolean, default=False)


class FlowClassifierRow(Described, Base):
    __tablename__ = "flow_classifiers"
    ethertype: Mapped[str] = mapped_column(String(4), default="IPv4")
    protocol: Mapped[str | None] = mapped_column(String(8), nullable=True)
    source_port_range_min: Mapped[int | None] = mapped_column(Integer, nullable=True)
    source_port_range_max: Mapped[int | None] = mapped_column(Integer, nullable=True)
    destination_port_range_min: Mapped[int | None] = mapped_column(Integer, nullable=True)
    destination_port_range_max: Mapped[int | None] = mapped_column(Integer, nullable=True)
    source_ip_prefix: Mapped[str | None] = mapped_column(String(64), nullable=True)
    destination_ip_prefix: Mapped[str | None] = mapped_column(String(64), nullable=True)
    logical_source_port: Mapped[str | None] = mapped_column(ID, ForeignKey("ports.id"), nullable=True)
    logical_destination_port: Mapped[str | None] = mapped_column(ID, ForeignKey("ports.id"), nullable=True)
    l7_parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class PortPairRow(Described, Base):
    __tablename__ = "port_pairs"
    __table_args__ = (UniqueConstraint("ingress", "egress"),)
    ingress: Mapped[str] = mapped_column(ID, ForeignKey("ports.id"))
    egress: Mapped[str] = mapped_column(ID, ForeignKey("ports.id"))
    service_function_parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    port_pair_group_id: Mapped[str | None] = mapped_column(ID, ForeignKey("port_pair_groups.id"), nullable=True)
    position: Mapped[int] = mapped_column(Integer, default=0)  # order inside its group


class PortPairGroupRow(Described, Base):
    __tablename__ = "port_pair_groups"
    group_id: Mapped[int] = mapped_column(Integer, unique=True)
    port_pair_group_parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    tap_enabled: Mapped[bool] = mapped_column(Boolean, default=False)


class PortChainRow(Described, Base):
    __tablename__ = "port_chains"
    chain_id: Mapped[int] = mapped_column(Integer, unique=True)
    chain_parameters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class ChainGroupRow(Base):
    """A chain's port pair groups, in order."""

    __tablename__ = "chain_group_associations"
    port_chain_id: Mapped[str] = mapped_column(ID, ForeignKey("port_chains.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    port_pair_group_id: Mapped[str] = mapped_column(ID, ForeignKey("port_pair_groups.id"))


class ChainClassifierRow(Base):
    """A chain's flow classifiers; a classifier belongs to at most one chain."""

    __tablename__ = "chain_classifier_associations"
    flow_classifier_id: Mapped[str] = mapped_column(ID, ForeignKey("flow_classifiers.id"), primary_key=True)
    port_chain_id: Mapped[str] = mapped_column(ID, ForeignKey("port_chains.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer, default=0)


class ServiceGraphRow(Described, Base):
    __tablename__ = "service_graphs"


class GraphEdgeRow(Base):
    """Traffic leaving ``src_chain_id`` enters ``dst_chain_id``."""

    __tablename__ = "graph_chain_associations"
    service_graph_id: Mapped[str] = mapped_column(ID, ForeignKey("service_graphs.id", ondelete="CASCADE"),
                                                  primary_key=True)
    src_chain_id: Mapped[str] = mapped_column(ID, ForeignKey("port_chains.id"), primary_key=True)
    dst_chain_id: Mapped[str] = mapped_column(ID, ForeignKey("port_chains.id"), primary_key=True)


class LinkRow(Base):
    """A fabric link the controller discovered, kept so that a restarted controller routes as before."""

    __tablename__ = "fabric_links"
    a_dpid: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    a_port: Mapped[int] = mapped_column(Integer, primary_key=True)
    b_dpid: Mapped[int] = mapped_column(BigInteger)
    b_port: Mapped[int] = mapped_column(Integer)


class SwitchRow(Base):
    __tablename__ = "fabric_switches"
    dpid: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    name: Mapped[str] = mapped_column(NAME)
    role: Mapped[str] = mapped_column(String(16))


class StreamRow(Described, Base):
    """A time-sensitive stream and where the scheduler put it (kept, so a restart places it the same)."""

    __tablename__ = "streams"
    stream_id: Mapped[int] = mapped_column(Integer, unique=True)
    talker: Mapped[str] = mapped_column(ID)
    listener: Mapped[str] = mapped_column(ID)
    period_ns: Mapped[int] = mapped_column(BigInteger)
    size_bytes: Mapped[int] = mapped_column(Integer)
    max_latency_ns: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    priority: Mapped[int] = mapped_column(Integer)
    udp_source_port: Mapped[int | None] = mapped_column(Integer, nullable=True)
    udp_destination_port: Mapped[int | None] = mapped_column(Integer, nullable=True)
    path: Mapped[list[Any]] = mapped_column(JSON, default=list)
    slot: Mapped[int | None] = mapped_column(Integer, nullable=True)
    phase: Mapped[int | None] = mapped_column(Integer, nullable=True)
    num_seamless_trees: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    second_path: Mapped[list[Any]] = mapped_column(JSON, default=list, server_default=text("'[]'"))


class ScheduleRow(Base):
    """The gates' duty cycle, one row (id 1); none: the time-triggered class opens in its streams' slots."""

    __tablename__ = "tsn_schedule"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    duty_percent: Mapped[int | None] = mapped_column(Integer, nullable=True)


class LeaderRow(Base):
    """Who leads the instances sharing this database (one row, id 1): the API URL writes are sent to, and the
    OpenFlow role generation it took the switches with. Written by the holder of the leader lock only."""

    __tablename__ = "leader"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str | None] = mapped_column(Text, nullable=True)
    generation: Mapped[int] = mapped_column(BigInteger)
    lldp_key: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # every instance signs LLDP with it


class ShareRow(Base):
    """An instance sharing the fabric (``srfabric serve --edges``): the edges it claims, comma-separated, and
    the advisory lock it holds while alive (``srfabric/api/shares.py``)."""

    __tablename__ = "shares"
    instance: Mapped[str] = mapped_column(Text, primary_key=True)  # its API URL
    edges: Mapped[str] = mapped_column(Text)
    lock_key: Mapped[int] = mapped_column(BigInteger)
