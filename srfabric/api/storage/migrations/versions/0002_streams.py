"""Time-sensitive streams.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"

ID = sa.String(36)
NAME = sa.String(255)


def upgrade() -> None:
    op.create_table("streams", sa.Column("id", ID, primary_key=True), sa.Column("project_id", NAME, nullable=False),
                    sa.Column("name", NAME, nullable=False), sa.Column("description", NAME, nullable=False),
                    sa.Column("stream_id", sa.Integer, nullable=False, unique=True),
                    sa.Column("talker", ID, nullable=False), sa.Column("listener", ID, nullable=False),
                    sa.Column("period_ns", sa.BigInteger, nullable=False),
                    sa.Column("size_bytes", sa.Integer, nullable=False), sa.Column("max_latency_ns", sa.BigInteger),
                    sa.Column("priority", sa.Integer, nullable=False), sa.Column("udp_source_port", sa.Integer),
                    sa.Column("udp_destination_port", sa.Integer), sa.Column("path", sa.JSON, nullable=False),
                    sa.Column("slot", sa.Integer), sa.Column("phase", sa.Integer))


def downgrade() -> None:
    op.drop_table("streams")
