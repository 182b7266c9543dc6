"""indexes for the pages, so that a view reads what it shows, not every game:
games(status, kind, seq) (replaces games(status, kind), a prefix of it) for the games
finished since a page's last view (the leaderboard's tally, the bot page's rating replay);
games(kind, created_at, id) for the games lists, newest first, and
games(kind, termination, created_at, id, status) for those of one termination (a rare one
is not looked for through every game); faults(version_id) for a bot's faults

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 10:40:00
"""

from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_games_status_kind_seq", "games", ["status", "kind", "seq"])
    op.drop_index("ix_games_status_kind", table_name="games")
    op.create_index("ix_games_kind_created", "games", ["kind", "created_at", "id"])
    op.create_index("ix_games_kind_termination", "games",
                    ["kind", "termination", "created_at", "id", "status"])
    op.create_index("ix_faults_version_id", "faults", ["version_id"])


def downgrade() -> None:
    op.drop_index("ix_faults_version_id", table_name="faults")
    op.drop_index("ix_games_kind_termination", table_name="games")
    op.drop_index("ix_games_kind_created", table_name="games")
    op.create_index("ix_games_status_kind", "games", ["status", "kind"])
    op.drop_index("ix_games_status_kind_seq", table_name="games")
