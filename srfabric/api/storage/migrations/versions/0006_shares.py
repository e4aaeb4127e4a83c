"""Instances sharing the fabric: the edges each claims (``srfabric serve --edges``), with the advisory lock it
holds while alive, and the LLDP signing key every instance shares (each reads the others' frames).

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_table("shares", sa.Column("instance", sa.Text, primary_key=True),
                    sa.Column("edges", sa.Text, nullable=False), sa.Column("lock_key", sa.BigInteger, nullable=False))
    op.add_column("leader", sa.Column("lldp_key", sa.LargeBinary, nullable=True))


def downgrade() -> None:
    op.drop_column("leader", "lldp_key")
    op.drop_table("shares")
