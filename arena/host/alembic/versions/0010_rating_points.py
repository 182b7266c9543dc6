"""rating_points: each version's batch rating after each batch fit, kept as the fits
happen (a bot page's rating chart, on the leaderboard's scale)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 14:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rating_points",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version_id", sa.Integer(), sa.ForeignKey("versions.id"), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("low", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.Column("open", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_rating_points_version_id", "rating_points", ["version_id"])


def downgrade() -> None:
    op.drop_index("ix_rating_points_version_id", "rating_points")
    op.drop_table("rating_points")
