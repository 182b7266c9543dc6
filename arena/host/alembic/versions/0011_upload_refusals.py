"""upload_refusals: each refused upload, counted against its participant's
max_versions_per_day for a day, kept across restarts (it was in the host's memory)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 12:50:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "upload_refusals",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("participant_id", sa.Integer(), sa.ForeignKey("participants.id"),
                  nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
    )
    op.create_index("ix_upload_refusals_at", "upload_refusals", ["at"])
    op.create_index("ix_upload_refusals_participant_at", "upload_refusals",
                    ["participant_id", "at"])


def downgrade() -> None:
    op.drop_index("ix_upload_refusals_participant_at", "upload_refusals")
    op.drop_index("ix_upload_refusals_at", "upload_refusals")
    op.drop_table("upload_refusals")
