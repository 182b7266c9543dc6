"""participants.disabled and its reason: a participant the organiser disabled (docs/host.md,
"Moderation"): their versions are not matched, they submit and challenge no more

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 13:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # plain ADD COLUMNs: SQLite's batch mode would copy the table and drop its
    # expression index (names one in any case, migration 0002)
    op.add_column("participants", sa.Column("disabled", sa.Boolean(), nullable=False,
                                            server_default=sa.false()))
    op.add_column("participants", sa.Column("disabled_reason", sa.Text(), nullable=False,
                                            server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.drop_column("disabled_reason")
        batch.drop_column("disabled")
