"""the host's first schema

Revision ID: 0001
Revises: -
Create Date: 2026-11-30 14:26:50.976719
"""

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table('dsets',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('meta',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('value', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('participants',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('is_admin', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name'),
    sa.UniqueConstraint('token_hash')
    )
    op.create_table('bots',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('active_version_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['owner_id'], ['participants.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    with op.batch_alter_table('bots', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bots_owner_id'), ['owner_id'], unique=False)

    op.create_table('games',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('dset_id', sa.Integer(), nullable=True),
    sa.Column('seating', sa.Integer(), nullable=False),
    sa.Column('attempt', sa.Integer(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('termination', sa.String(length=16), nullable=True),
    sa.Column('winner', sa.Integer(), nullable=True),
    sa.Column('scores', sa.JSON(), nullable=True),
    sa.Column('places', sa.JSON(), nullable=True),
    sa.Column('hands', sa.Integer(), nullable=True),
    sa.Column('wall_ms', sa.Integer(), nullable=True),
    sa.Column('think_ms', sa.Integer(), nullable=True),
    sa.Column('record_path', sa.Text(), nullable=True),
    sa.Column('void_reason', sa.Text(), nullable=False),
    sa.Column('rated', sa.Boolean(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['dset_id'], ['dsets.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('seq')
    )
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_games_dset_id'), ['dset_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_games_finished_at'), ['finished_at'], unique=False)
        batch_op.create_index('ix_games_status_created', ['status', 'created_at'], unique=False)

    op.create_table('invites',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_by', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['used_by'], ['participants.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('code_hash')
    )
    op.create_table('versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('bot_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('archive_sha256', sa.String(length=64), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('activated_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('games', sa.Integer(), nullable=False),
    sa.Column('forfeits_in_row', sa.Integer(), nullable=False),
    sa.Column('mu', sa.Float(), nullable=False),
    sa.Column('sigma', sa.Float(), nullable=False),
    sa.Column('rating', sa.Float(), nullable=True),
    sa.Column('rating_low', sa.Float(), nullable=True),
    sa.Column('rating_high', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['bot_id'], ['bots.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('bot_id', 'hash'),
    sa.UniqueConstraint('bot_id', 'number')
    )
    with op.batch_alter_table('versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_versions_bot_id'), ['bot_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_versions_status'), ['status'], unique=False)

    op.create_table('faults',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('seat', sa.Integer(), nullable=False),
    sa.Column('version_id', sa.Integer(), nullable=True),
    sa.Column('reason', sa.String(length=32), nullable=False),
    sa.Column('detail', sa.Text(), nullable=False),
    sa.Column('forfeit', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('faults', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_faults_game_id'), ['game_id'], unique=False)

    op.create_table('game_seats',
    sa.Column('game_id', sa.String(length=64), nullable=False),
    sa.Column('seat', sa.Integer(), nullable=False),
    sa.Column('version_id', sa.Integer(), nullable=True),
    sa.Column('reference', sa.String(length=64), nullable=False),
    sa.Column('side', sa.Integer(), nullable=False),
    sa.Column('place', sa.Integer(), nullable=True),
    sa.Column('score', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['game_id'], ['games.id'], ),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ),
    sa.PrimaryKeyConstraint('game_id', 'seat')
    )
    with op.batch_alter_table('game_seats', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_game_seats_version_id'), ['version_id'], unique=False)




def downgrade() -> None:

    with op.batch_alter_table('game_seats', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_game_seats_version_id'))

    op.drop_table('game_seats')
    with op.batch_alter_table('faults', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_faults_game_id'))

    op.drop_table('faults')
    with op.batch_alter_table('versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_versions_status'))
        batch_op.drop_index(batch_op.f('ix_versions_bot_id'))

    op.drop_table('versions')
    op.drop_table('invites')
    with op.batch_alter_table('games', schema=None) as batch_op:
        batch_op.drop_index('ix_games_status_created')
        batch_op.drop_index(batch_op.f('ix_games_finished_at'))
        batch_op.drop_index(batch_op.f('ix_games_dset_id'))

    op.drop_table('games')
    with op.batch_alter_table('bots', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bots_owner_id'))

    op.drop_table('bots')
    op.drop_table('participants')
    op.drop_table('meta')
    op.drop_table('dsets')

