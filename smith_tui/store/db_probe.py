"""Read-only inspection of an existing database file before Smith opens it for writing.

Nothing here writes to the file or leaves a `-wal`/`-shm` beside it: when no `-wal` file exists
the whole database is in the main file, so it is read with `immutable=1` (no locks, no side
files); otherwise the side files already exist and a plain `mode=ro` connection is used.
"""

import contextlib
import sqlite3
from pathlib import Path
from urllib.parse import quote

from smith_tui.store import codec
from smith_tui.store.errors import StoreError
from smith_tui.store.sql_layout import APPLICATION_ID, LATEST_VERSION

SQLITE_MAGIC = b"SQLite format 3\x00"

_MOVE_AWAY = (
    "Smith left it untouched. Pass another database path (--db PATH), "
    "or move this file away so Smith can create a new database there."
)


def _read_only_uri(path: Path) -> str:
    wal = path.with_name(path.name + "-wal")
    suffix = "mode=ro" if wal.exists() else "mode=ro&immutable=1"
    return f"file:{quote(str(path.resolve()))}?{suffix}"


def _not_smith(path: Path, why: str) -> StoreError:
    return StoreError(f"{path} is not a Smith database ({why}). {_MOVE_AWAY}")


def _damaged(path: Path, why: str) -> StoreError:
    return StoreError(
        f"{path} is a damaged database ({why}). Smith left it untouched. Restore it from a "
        f"backup (files named {path.name}.bak-v*), or move it away so Smith can create a new "
        "database there, or pass another path with --db PATH."
    )


def _inspect(conn: sqlite3.Connection, path: Path, verify: bool) -> int | None:
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)")] if verify else ["ok"]
    if problems != ["ok"]:
        lines = [
            line.strip()
            for problem in problems
            for line in problem.splitlines()
            if line.strip() and not line.startswith("***")
        ]
        raise _damaged(path, "integrity check: " + "; ".join(lines[:3]))
    tables = sorted(
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not row[0].startswith("sqlite_")
    )
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if application_id not in (0, APPLICATION_ID):
        raise _not_smith(path, f"it belongs to another application, id {application_id:#x}")
    if not tables:
        return None
    if "meta" not in tables:
        listed = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise _not_smith(path, f"an SQLite database with tables {listed} and no Smith meta table")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = None
    if row is not None:
        with contextlib.suppress(ValueError, TypeError):
            version = codec.loads(row[0])
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        if application_id == APPLICATION_ID:
            raise _damaged(path, "its schema_version is missing or unreadable")
        raise _not_smith(path, "it has a meta table without a Smith schema_version")
    if version > LATEST_VERSION:
        raise StoreError(
            f"{path} was written by a newer Smith (schema version {version}; this Smith "
            f"understands up to {LATEST_VERSION}). Smith left it untouched. Upgrade Smith, "
            "or pass another database path with --db PATH."
        )
    return version


def probe_database(path: Path, *, verify: bool = True) -> int | None:
    """Return the schema version of the Smith database at `path` without changing it.

    With `verify`, `PRAGMA quick_check` reads the whole file first (about 1 s per 600 MB);
    without it only the header, the tables and the schema version are looked at.

    Returns `None` when there is nothing to lose: the path does not exist, the file is empty,
    or it is an SQLite database without any table. Raises `StoreError` (naming the path and
    what to do) for a directory, an unreadable file, a file that is not SQLite, an SQLite
    database of some other application, a damaged database, or one from a newer Smith.
    """
    if not path.exists():
        return None
    if path.is_dir():
        raise StoreError(f"{path} is a directory; the database path must name a file.")
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StoreError(f"cannot read the database {path}: {exc.strerror or exc}.") from None
    if not header:
        return None
    if header != SQLITE_MAGIC:
        raise _not_smith(path, "it is not an SQLite file")
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the database {path} for reading: {exc}.") from None
    try:
        return _inspect(conn, path, verify)
    except sqlite3.DatabaseError as exc:
        raise _damaged(path, str(exc)) from None
    finally:
        conn.close()
