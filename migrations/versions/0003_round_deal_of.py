"""rounds dealt from a shared deal

A round another room's host dealt from a finished round that was shared with them (issue #47,
``app/rooms/deals.py``) names that round's public id.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-07 00:20:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('rounds', schema=None) as batch_op:
        batch_op.add_column(sa.Column('deal_of', sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('rounds', schema=None) as batch_op:
        batch_op.drop_column('deal_of')
