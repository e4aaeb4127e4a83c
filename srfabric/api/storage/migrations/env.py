"""Alembic environment: migrations run on the connection ``srfabric.api.storage.database`` hands over."""

from alembic import context

from srfabric.api.storage.tables import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
