"""Who leads the instances on one database: the leader's API URL and its OpenFlow role generation (one row).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    table = op.create_table("leader", sa.Column("id", sa.Integer, primary_key=True),
                            sa.Column("url", sa.Text), sa.Column("generation", sa.BigInteger, nullable=False))
    op.bulk_insert(table, [{"id": 1, "url": None, "generation": 0}])


def downgrade() -> None:
    op.drop_table("leader")
