"""The networking-sfc resources, ports, and the learned fabric.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None

ID = sa.String(36)
NAME = sa.String(255)


def _owned() -> list[sa.Column]:
    return [sa.Column("id", ID, primary_key=True), sa.Column("project_id", NAME, nullable=False),
            sa.Column("name", NAME, nullable=False)]


def upgrade() -> None:
    op.create_table("ports", *_owned(), sa.Column("mac_address", sa.String(17), nullable=False),
                    sa.Column("fixed_ips", sa.JSON, nullable=False), sa.Column("device_owner", NAME, nullable=False),
                    sa.Column("device_id", NAME, nullable=False), sa.Column("binding_profile", sa.JSON, nullable=False),
                    sa.Column("discovered", sa.Boolean, nullable=False))
    op.create_table("flow_classifiers", *_owned(), sa.Column("description", NAME, nullable=False),
                    sa.Column("ethertype", sa.String(4), nullable=False), sa.Column("protocol", sa.String(8)),
                    sa.Column("source_port_range_min", sa.Integer), sa.Column("source_port_range_max", sa.Integer),
                    sa.Column("destination_port_range_min", sa.Integer),
                    sa.Column("destination_port_range_max", sa.Integer),
                    sa.Column("source_ip_prefix", sa.String(64)), sa.Column("destination_ip_prefix", sa.String(64)),
                    sa.Column("logical_source_port", ID, sa.ForeignKey("ports.id")),
                    sa.Column("logical_destination_port", ID, sa.ForeignKey("ports.id")),
                    sa.Column("l7_parameters", sa.JSON, nullable=False))
    op.create_table("port_pair_groups", *_owned(), sa.Column("description", NAME, nullable=False),
                    sa.Column("group_id", sa.Integer, nullable=False, unique=True),
                    sa.Column("port_pair_group_parameters", sa.JSON, nullable=False),
                    sa.Column("tap_enabled", sa.Boolean, nullable=False))
    op.create_table("port_pairs", *_owned(), sa.Column("description", NAME, nullable=False),
                    sa.Column("ingress", ID, sa.ForeignKey("ports.id"), nullable=False),
                    sa.Column("egress", ID, sa.ForeignKey("ports.id"), nullable=False),
                    sa.Column("service_function_parameters", sa.JSON, nullable=False),
                    sa.Column("port_pair_group_id", ID, sa.ForeignKey("port_pair_groups.id")),
                    sa.Column("position", sa.Integer, nullable=False),
                    sa.UniqueConstraint("ingress", "egress"))
    op.create_table("port_chains", *_owned(), sa.Column("description", NAME, nullable=False),
                    sa.Column("chain_id", sa.Integer, nullable=False, unique=True),
                    sa.Column("chain_parameters", sa.JSON, nullable=False))
    op.create_table("chain_group_associations",
                    sa.Column("port_chain_id", ID, sa.ForeignKey("port_chains.id", ondelete="CASCADE"),
                              primary_key=True),
                    sa.Column("position", sa.Integer, primary_key=True),
                    sa.Column("port_pair_group_id", ID, sa.ForeignKey("port_pair_groups.id"), nullable=False))
    op.create_table("chain_classifier_associations",
                    sa.Column("flow_classifier_id", ID, sa.ForeignKey("flow_classifiers.id"), primary_key=True),
                    sa.Column("port_chain_id", ID, sa.ForeignKey("port_chains.id", ondelete="CASCADE"),
                              nullable=False),
                    sa.Column("position", sa.Integer, nullable=False))
    op.create_table("service_graphs", *_owned(), sa.Column("description", NAME, nullable=False))
    op.create_table("graph_chain_associations",
                    sa.Column("service_graph_id", ID, sa.ForeignKey("service_graphs.id", ondelete="CASCADE"),
                              primary_key=True),
                    sa.Column("src_chain_id", ID, sa.ForeignKey("port_chains.id"), primary_key=True),
                    sa.Column("dst_chain_id", ID, sa.ForeignKey("port_chains.id"), primary_key=True))
    op.create_table("fabric_links", sa.Column("a_dpid", sa.BigInteger, primary_key=True),
                    sa.Column("a_port", sa.Integer, primary_key=True),
                    sa.Column("b_dpid", sa.BigInteger, nullable=False),
                    sa.Column("b_port", sa.Integer, nullable=False))
    op.create_table("fabric_switches", sa.Column("dpid", sa.BigInteger, primary_key=True),
                    sa.Column("name", NAME, nullable=False), sa.Column("role", sa.String(16), nullable=False))


def downgrade() -> None:
    for table in ("fabric_switches", "fabric_links", "graph_chain_associations", "service_graphs",
                  "chain_classifier_associations", "chain_group_associations", "port_chains", "port_pairs",
                  "port_pair_groups", "flow_classifiers", "ports"):
        op.drop_table(table)
