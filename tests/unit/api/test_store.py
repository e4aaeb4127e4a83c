"""The SQLAlchemy models and the alembic migrations describe the same tables."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, inspect

from srfabric.api.db import Base
from srfabric.api.store import migrate


def test_models_match_the_migrated_schema(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/schema.db")
    migrate(engine)
    found = inspect(engine)
    assert set(found.get_table_names()) - {"alembic_version"} == set(Base.metadata.tables)
    for table in Base.metadata.sorted_tables:
        assert {c["name"] for c in found.get_columns(table.name)} == {c.name for c in table.columns}, table.name
