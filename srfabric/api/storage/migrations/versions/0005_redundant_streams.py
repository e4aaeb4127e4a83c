"""Redundant streams (IEEE 802.1CB): how many seamless trees a stream asked for, and its second tree's path.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.add_column("streams", sa.Column("num_seamless_trees", sa.Integer, nullable=False, server_default="1"))
    op.add_column("streams", sa.Column("second_path", sa.JSON, nullable=False, server_default=sa.text("'[]'")))


def downgrade() -> None:
    op.drop_column("streams", "second_path")
    op.drop_column("streams", "num_seamless_trees")
