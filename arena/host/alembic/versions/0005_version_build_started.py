"""versions.build_started_at: when a version's latest build started, so that the build
queue can take the participant whose latest build started longest ago (a fair share,
docs/host.md "From upload to rated games")

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 10:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("versions", sa.Column("build_started_at", sa.DateTime(timezone=True),
                                        nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("versions") as batch:
        batch.drop_column("build_started_at")
