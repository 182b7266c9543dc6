"""games.asked_by: the participant who asked for a challenge game (an unrated test game
against chosen opponents; docs/host.md, "Challenges"); null for every other game

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 13:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("asked_by", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_games_asked_by", "participants", ["asked_by"], ["id"])
    # a participant's challenges of the last hour: their quota, and their list
    op.create_index("ix_games_asked_by_created", "games", ["asked_by", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_games_asked_by_created", table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint("fk_games_asked_by", type_="foreignkey")
        batch.drop_column("asked_by")
