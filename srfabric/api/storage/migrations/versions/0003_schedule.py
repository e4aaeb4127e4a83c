"""The gates' duty cycle (one row; absent: gates open in the streams' slots only).

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table("tsn_schedule", sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("duty_percent", sa.Integer))


def downgrade() -> None:
    op.drop_table("tsn_schedule")
