"""Alembic's environment for the host: run with the connection that
:func:`arena.host.db.migrate` passes in ``config.attributes["connection"]``."""

from alembic import context

from arena.host.models import Base

config = context.config
target_metadata = Base.metadata

connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run the host's migrations through arena.host.db.migrate")
context.configure(connection=connection, target_metadata=target_metadata,
                  render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
