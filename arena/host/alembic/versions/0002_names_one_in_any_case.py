"""names that differ only in case are one name: unique indexes on lower(name) of the
participants and of the bots

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 04:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

TABLES = {"participants": "participant", "bots": "bot"}


def upgrade() -> None:
    conn = op.get_bind()
    for table, what in TABLES.items():
        # a database that already holds such a pair is left as it is: say which names
        rows = conn.execute(sa.text(
            f"SELECT name FROM {table} WHERE lower(name) IN "
            f"(SELECT lower(name) FROM {table} GROUP BY lower(name) HAVING count(*) > 1) "
            "ORDER BY lower(name), name")).scalars().all()
        if rows:
            clashes: dict[str, list[str]] = {}
            for name in sorted(rows):  # by code point, whatever the database's collation
                clashes.setdefault(name.lower(), []).append(repr(name))
            pairs = "; ".join(" and ".join(names) for _, names in sorted(clashes.items()))
            raise RuntimeError(
                f"{what} names that differ only in case are one name, and this database "
                f"holds {pairs}: rename all but one of each (UPDATE {table} SET name = ... "
                "WHERE id = ...) and start the host again")
    # only once both tables are known clean (SQLite runs DDL outside the transaction)
    for table in TABLES:
        op.create_index(f"uq_{table}_name_lower", table, [sa.text("lower(name)")],
                        unique=True)


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"uq_{table}_name_lower", table_name=table)
