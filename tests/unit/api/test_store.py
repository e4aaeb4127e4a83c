"""The SQLAlchemy models and the alembic migrations describe the same tables."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, inspect

from srfabric.api.storage.database import migrate
from srfabric.api.storage.tables import Base


def test_models_match_the_migrated_schema(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/schema.db")
    migrate(engine)
    found = inspect(engine)
    assert set(found.get_table_names()) - {"alembic_version"} == set(Base.metadata.tables)
    for table in Base.metadata.sorted_tables:
        assert {c["name"] for c in found.get_columns(table.name)} == {c.name for c in table.columns}, table.name


def test_a_start_skips_alembic_only_when_the_schema_is_the_newest_migration(tmp_path: Path) -> None:
    from sqlalchemy import text

    from srfabric.api.storage.database import at_newest

    engine = create_engine(f"sqlite:///{tmp_path}/start.db")
    assert not at_newest(engine)  # a new database: migrated first
    migrate(engine, "0004")
    assert not at_newest(engine)  # an older schema: migrated on
    migrate(engine)
    assert at_newest(engine)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    assert not at_newest(engine)  # a schema this code does not know goes to Alembic, which says so
