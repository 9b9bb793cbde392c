"""Bringing a database to the latest schema: initialise, back up, and migrate in order."""

import sqlite3
import time
from pathlib import Path

import peewee

from smith_tui.store import codec
from smith_tui.store.errors import StoreError
from smith_tui.store.file_modes import create_private_file
from smith_tui.store.sql_layout import BASELINE_VERSION, MIGRATIONS, create_baseline


def read_schema_version(db: peewee.SqliteDatabase) -> int | None:
    """Return the recorded schema version, or `None` when the database has no meta table."""
    has_meta = db.execute_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return None
    row = db.execute_sql("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else codec.loads(row[0])


def _write_schema_version(db: peewee.SqliteDatabase, version: int) -> None:
    db.execute_sql(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (codec.dumps(version),),
    )


def backup_database(path: Path, version: int) -> Path:
    """Copy the database with SQLite's online backup API to `<db>.bak-v<version>-<UTC time>`."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}.bak-v{version}-{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.name}.bak-v{version}-{stamp}-{counter}")
    try:
        source = sqlite3.connect(str(path), timeout=10)
        try:
            create_private_file(target)  # the copy is as private as the database
            destination = sqlite3.connect(str(target))
            try:
                source.backup(destination)
            finally:
                destination.close()
        finally:
            source.close()
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(
            f"cannot back up {path} to {target} before upgrading it: {exc}. "
            "Nothing was changed; free some disk space or check permissions and try again."
        ) from None
    return target


def bring_up_to_date(db: peewee.SqliteDatabase) -> int:
    """Create or migrate the schema inside one write transaction; return the old version.

    Returns 0 for a database that was just initialised. Safe against another process doing
    the same at the same time: the version is re-read after the write lock is taken.
    """
    with db.atomic():
        current = read_schema_version(db)
        if current is None:
            create_baseline(db)
            _write_schema_version(db, BASELINE_VERSION)
            start = BASELINE_VERSION
            found = 0
        else:
            start = found = current
        for migration in MIGRATIONS:
            if migration.to_version > start:
                migration.apply(db)
                _write_schema_version(db, migration.to_version)
    return found
