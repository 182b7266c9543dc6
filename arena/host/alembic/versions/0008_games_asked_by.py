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
    # a plain ADD COLUMN: SQLite's batch mode would copy the table and lose what it cannot
    # reflect; SQLite adds no foreign key to a table it has (the model keeps the link)
    op.add_column("games", sa.Column("asked_by", sa.Integer(), nullable=True))
    if op.get_bind().dialect.name != "sqlite":
        op.create_foreign_key("fk_games_asked_by", "games", "participants", ["asked_by"],
                              ["id"])
    # a participant's challenges of the last hour: their quota, and their list
    op.create_index("ix_games_asked_by_created", "games", ["asked_by", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_games_asked_by_created", table_name="games")
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint("fk_games_asked_by", "games", type_="foreignkey")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("asked_by")
