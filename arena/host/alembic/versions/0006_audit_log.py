"""audit: the audit log of phase changes and the organiser's actions (docs/host.md,
"A season: phases")

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 02:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("audit")
