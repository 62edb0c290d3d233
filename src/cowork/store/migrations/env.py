"""Alembic environment: migrations always run on a connection handed in by `Database.migrate`."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    # SQLite cannot ALTER most things in place; batch mode rebuilds tables when a migration needs it.
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
