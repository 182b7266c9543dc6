"""an index on games(status, kind): counting the finished rated games (the host's status,
its batch loop) reads the index alone instead of every game's row

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 06:30:00
"""

from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_games_status_kind", "games", ["status", "kind"])


def downgrade() -> None:
    op.drop_index("ix_games_status_kind", table_name="games")
