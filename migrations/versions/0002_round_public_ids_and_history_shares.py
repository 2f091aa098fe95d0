"""round public ids and history shares

Every round gets a random public id (the integer key stays internal: sequential ids let anyone
walk the rounds and read the rooms' codes); existing rounds get theirs here. History shares are
the night's records a host shared on purpose.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03 09:00:00.000000
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

#: Rows given their public ids per statement.
CHUNK = 1000


def upgrade() -> None:
    with op.batch_alter_table('rounds', schema=None) as batch_op:
        batch_op.add_column(sa.Column('public_id', sa.String(length=32), nullable=True))

    rounds = sa.table('rounds', sa.column('id', sa.Integer), sa.column('public_id', sa.String))
    bind = op.get_bind()
    ids = [row[0] for row in bind.execute(sa.select(rounds.c.id).where(rounds.c.public_id.is_(None)))]
    set_id = rounds.update().where(rounds.c.id == sa.bindparam('rid')).values(public_id=sa.bindparam('pid'))
    for start in range(0, len(ids), CHUNK):
        # (the same as app.history.writer.new_public_id, which a migration must not import)
        bind.execute(set_id, [{'rid': rid, 'pid': secrets.token_urlsafe(16)} for rid in ids[start:start + CHUNK]])

    with op.batch_alter_table('rounds', schema=None) as batch_op:
        batch_op.alter_column('public_id', existing_type=sa.String(length=32), nullable=False)
        batch_op.create_unique_constraint('uq_round_public_id', ['public_id'])

    op.create_table('history_shares',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('share_id', sa.String(length=32), nullable=False),
    sa.Column('room_code', sa.String(length=6), nullable=False),
    sa.Column('since_ms', sa.BigInteger(), nullable=False),
    sa.Column('created_ms', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('room_code', 'since_ms', name='uq_history_share_room'),
    sa.UniqueConstraint('share_id', name='uq_history_share_id')
    )


def downgrade() -> None:
    op.drop_table('history_shares')
    with op.batch_alter_table('rounds', schema=None) as batch_op:
        batch_op.drop_constraint('uq_round_public_id', type_='unique')
        batch_op.drop_column('public_id')
