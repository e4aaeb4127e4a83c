"""Open the API's database: SQLite by default, PostgreSQL by URL; migrate it to the newest schema."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect, text

from srfabric.errors import SrfabricError

MIGRATIONS = Path(__file__).parent / "migrations"
DEFAULT_DB = "sqlite:///srfabric.db"


def open_database(url: str = DEFAULT_DB) -> Engine:
    """An engine for ``url`` (``sqlite:///path`` or ``postgresql://...``) whose schema is up to date."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    if not url.startswith(("sqlite", "postgresql")):
        raise SrfabricError("--db", f"{url!r}: only sqlite:/// and postgresql:// URLs are supported")
    try:
        # A PostgreSQL restart leaves the pooled connections dead, and the first statement on one would fail: a
        # newly elected leader's first load among them. Each checkout is tested first (one round trip).
        engine = create_engine(url, pool_pre_ping=url.startswith("postgresql"))
        if url.startswith("sqlite"):
            event.listen(engine, "connect", _sqlite_pragmas)
        migrate(engine)
    except Exception as error:  # a bad URL, an unreachable server, a file that is not a database
        raise SrfabricError("--db", f"cannot open {url!r}: {error}") from None
    return engine


def _sqlite_pragmas(connection: object, _record: object) -> None:
    cursor = connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")  # WAL keeps committed transactions on a crash of the process
    cursor.close()


MIGRATION_LOCK = 0x73726662_6D696772  # "srfbmigr": instances starting together on PostgreSQL migrate in turn


def newest_revision() -> str:
    """The newest migration's revision: each is numbered in its file's name (``0005_redundant_streams.py``).

    >>> newest_revision() >= "0005"
    True
    """
    return max(path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def at_newest(engine: Engine) -> bool:
    """Whether the schema is the newest migration's already: then a start need not load Alembic and its scripts
    (a restart's time, while switches wait)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return False
        return connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == \
            [newest_revision()]


def migrate(engine: Engine, revision: str = "head") -> None:
    if revision == "head" and at_newest(engine):
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":  # held to the end of the transaction; the next one sees head
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
