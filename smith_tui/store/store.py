"""`Store`: one SQLite file opened safely, with every repository hanging off it."""

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import peewee

from smith_tui.store import search
from smith_tui.store.config_entries import ConfigRepository
from smith_tui.store.conversations import ConversationRepository
from smith_tui.store.db_probe import probe_database
from smith_tui.store.errors import StoreError
from smith_tui.store.file_modes import prepare_private_database, prepare_private_folder
from smith_tui.store.meta import MetaRepository
from smith_tui.store.migrate import backup_database, bring_up_to_date
from smith_tui.store.models import bind_models
from smith_tui.store.notes import NoteRepository
from smith_tui.store.paths import default_db_path
from smith_tui.store.project_memory import ProjectMemoryRepository
from smith_tui.store.records import MemoryHit, MessageHit
from smith_tui.store.snapshots import SnapshotRepository
from smith_tui.store.sql_layout import LATEST_VERSION
from smith_tui.store.turns import TurnRepository
from smith_tui.store.usage_repo import UsageRepository

BUSY_TIMEOUT_SECONDS = 10.0

_PRAGMAS = (
    ("journal_mode", "wal"),
    ("busy_timeout", int(BUSY_TIMEOUT_SECONDS * 1000)),
    ("foreign_keys", 1),
    ("synchronous", "normal"),
    ("cache_size", -32_000),  # 32 MB page cache per connection (negative means KiB)
)


VERIFY_MAX_BYTES = 64 * 1024 * 1024
"""Largest database that gets a whole-file integrity check on every open."""


def _connect_and_migrate(db: peewee.SqliteDatabase, target: Path) -> None:
    """Connect and bring the schema up to date, waiting out another process doing the same.

    Two processes opening one brand-new file race for the switch to WAL and the schema
    write; SQLite reports "locked" at once (without its busy handler) when waiting could
    deadlock, so such failures are retried with a short backoff until the busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    delay = 0.01
    while True:
        try:
            db.connect()
            bring_up_to_date(db)
            return
        except (peewee.DatabaseError, sqlite3.Error) as exc:
            db.close()
            if "locked" in str(exc) and time.monotonic() + delay < deadline:
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
                continue
            raise StoreError(f"cannot open the database {target}: {exc}.") from None


class Store:
    """An open Smith database.

    Open with `Store.open(path)`; use the repositories (`conversations`, `turns`, `notes`,
    `usage`, `project_memory`, `config`, `meta`, `snapshots`) and the search methods; wrap
    several writes in `with store.atomic():` to make them one transaction; `close()` at the
    end (or use the store as a context manager). Each thread gets its own connection.
    """

    def __init__(self, db: peewee.SqliteDatabase, path: Path, backup_path: Path | None) -> None:
        self._db = db
        self.path = path
        # Where the pre-migration copy went during this open, if one was made.
        self.backup_path = backup_path
        models = bind_models(db)
        self.conversations = ConversationRepository(db, models)
        self.turns = TurnRepository(db, models)
        self.notes = NoteRepository(db, models)
        self.usage = UsageRepository(db, models)
        self.project_memory = ProjectMemoryRepository(db, models)
        self.config = ConfigRepository(db, models)
        self.meta = MetaRepository(db, models)
        self.snapshots = SnapshotRepository(db, models)

    @classmethod
    def open(cls, path: str | Path | None = None, *, verify: bool | None = None) -> "Store":
        """Open (creating if needed) the database at `path`, default `default_db_path()`.

        The folder is created 0700 and the file 0600 (``store/file_modes.py``).
        An existing file is first inspected read-only; a file that is not a Smith database,
        is damaged, or comes from a newer Smith raises `StoreError` and is left untouched.
        An older schema is backed up to `<db>.bak-v<old>-<time>` and migrated in order.
        `verify=False` skips the whole-file integrity check (`PRAGMA quick_check`), which
        costs about a second per 600 MB of database; the default (`None`) runs it only for
        files under `VERIFY_MAX_BYTES`, so start-up stays fast on huge histories (the
        header and schema checks always run).
        """
        target = Path(default_db_path() if path is None else path).expanduser().absolute()
        if verify is None:
            try:
                verify = target.stat().st_size <= VERIFY_MAX_BYTES
            except OSError:
                verify = True
        version = probe_database(target, verify=verify)
        # Private from the start: folder 0700, file (and so its -wal/-shm) 0600.
        default_folder = default_db_path().expanduser().absolute().parent
        try:
            prepare_private_folder(target.parent, narrow_existing=target.parent == default_folder)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder {target.parent} for the database: "
                f"{exc.strerror or exc}. Choose another path with --db PATH."
            ) from None
        try:
            prepare_private_database(target)
        except OSError as exc:
            raise StoreError(
                f"cannot create the database {target} or make it private (mode 0600): "
                f"{exc.strerror or exc}. Check its permissions or choose another path with "
                "--db PATH."
            ) from None
        backup = None
        if version is not None and version < LATEST_VERSION:
            backup = backup_database(target, version)
        db = peewee.SqliteDatabase(
            str(target), pragmas=_PRAGMAS, timeout=BUSY_TIMEOUT_SECONDS, lock_type="IMMEDIATE"
        )
        _connect_and_migrate(db, target)
        return cls(db, target, backup)

    def close(self) -> None:
        """Close this thread's connection (safe to call twice)."""
        if not self._db.is_closed():
            self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction (`BEGIN IMMEDIATE`) around everything inside; nested uses savepoints.

        An exception inside rolls back every write made in the block, then propagates.
        """
        with self._db.atomic():
            yield

    @property
    def database(self) -> peewee.SqliteDatabase:
        """The underlying peewee database (for tests, tools and benchmarks)."""
        return self._db

    def schema_version(self) -> int:
        """The schema version of the open database."""
        return self.meta.schema_version()

    def search_messages(
        self,
        query: str,
        *,
        project_id: str | None = None,
        conversation_id: str | None = None,
        limit: int = 20,
        highlight: tuple[str, str] = search.DEFAULT_HIGHLIGHT,
    ) -> list[MessageHit]:
        """Full-text search of message content, best match first; any query text is safe."""
        return search.search_messages(
            self._db,
            query,
            project_id=project_id,
            conversation_id=conversation_id,
            limit=limit,
            highlight=highlight,
        )

    def search_project_memory(
        self,
        query: str,
        project_id: str,
        *,
        limit: int = 20,
        highlight: tuple[str, str] = search.DEFAULT_HIGHLIGHT,
    ) -> list[MemoryHit]:
        """Full-text search of one project's memory notes, best match first."""
        return search.search_project_memory(
            self._db, query, project_id, limit=limit, highlight=highlight
        )

    def rebuild_message_search_index(self) -> None:
        """Rebuild the message full-text index from the messages table."""
        search.rebuild_message_search_index(self._db)

    def rebuild_project_memory_search_index(self) -> None:
        """Rebuild the project-memory full-text index from the project_memory table."""
        search.rebuild_project_memory_search_index(self._db)

    def prune_request_snapshots(self, retention_days: float, *, now: float | None = None) -> int:
        """Delete request snapshots older than `retention_days`; return how many went."""
        return self.snapshots.prune(retention_days, now=now)
