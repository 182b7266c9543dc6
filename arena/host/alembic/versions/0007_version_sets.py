"""versions.sets: the duplicate sets a version has played whole (a set counts once its
last game has finished), for its placement series (docs/host.md, "A placement series");
counted from the games already played

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 02:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("versions", sa.Column("sets", sa.Integer(), nullable=False,
                                        server_default="0"))
    op.execute("""
        UPDATE versions SET sets = (
            SELECT COUNT(DISTINCT g.dset_id) FROM game_seats gs
            JOIN games g ON g.id = gs.game_id
            WHERE gs.version_id = versions.id AND g.kind = 'rated'
              AND g.status = 'finished' AND g.dset_id IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM games o WHERE o.dset_id = g.dset_id
                              AND o.status IN ('queued', 'running')))
    """)


def downgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.drop_column("sets")
