"""Schema migrations: version 1 files are backed up, then upgraded in one transaction."""

import sqlite3
from pathlib import Path

import peewee
import pytest

from smith_tui.store import Store, migrate
from smith_tui.store.schema import MIGRATIONS, Migration, create_baseline


def make_v1_database(path: Path) -> None:
    """A database exactly as the version-1 schema left it, with some data in it."""
    db = peewee.SqliteDatabase(str(path), pragmas={"journal_mode": "wal"})
    db.connect()
    with db.atomic():
        create_baseline(db)
        db.execute_sql("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
        db.execute_sql(
            "INSERT INTO conversations (id, project_id, title, created_at, updated_at) "
            "VALUES ('conv1', 'proj', 'old chat', 1.0, 2.0)"
        )
        for position, text in enumerate(["legacy question", "legacy answer"]):
            db.execute_sql(
                "INSERT INTO messages (conversation_id, project_id, position, role, content,"
                " created_at) VALUES ('conv1', 'proj', ?, 'user', ?, 3.0)",
                (position, text),
            )
    db.close()


def tables(path: Path) -> set[str]:
    raw = sqlite3.connect(path)
    try:
        return {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    finally:
        raw.close()


def test_version_1_is_backed_up_and_migrated(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    make_v1_database(path)
    assert "request_snapshots" not in tables(path)
    with Store.open(path) as store:
        assert store.schema_version() == 2
        backup = store.backup_path
        assert backup is not None and backup.parent == tmp_path
        assert backup.name.startswith("smith.db.bak-v1-")
        assert [m.content for m in store.conversations.list_messages("conv1")] == [
            "legacy question",
            "legacy answer",
        ]
        assert [h.position for h in store.search_messages("answer")] == [1]
        store.snapshots.record("conv1", "m", "system", [])
        assert len(store.snapshots.list_for_conversation("conv1")) == 1
    assert {"request_snapshots", "messages_turn"} <= tables(path)

    raw = sqlite3.connect(backup)
    assert raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
    assert raw.execute("SELECT COUNT(*) FROM messages").fetchone() == (2,)
    raw.close()
    assert "request_snapshots" not in tables(backup)

    with Store.open(path) as store:
        assert store.backup_path is None  # already current: no second backup
    assert len(list(tmp_path.glob("smith.db.bak-v*"))) == 1


def test_a_failing_migration_leaves_the_database_at_its_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "smith.db"
    make_v1_database(path)

    def broken(db: peewee.SqliteDatabase) -> None:
        db.execute_sql("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("migration step failed")

    monkeypatch.setattr(migrate, "MIGRATIONS", (*MIGRATIONS, Migration(3, "broken", broken)))
    db = peewee.SqliteDatabase(str(path), lock_type="IMMEDIATE")
    db.connect()
    with pytest.raises(RuntimeError, match="migration step failed"):
        migrate.bring_up_to_date(db)
    assert migrate.read_schema_version(db) == 1
    db.close()
    assert not {"request_snapshots", "half_done"} & tables(path)


def test_migrations_are_numbered_in_order() -> None:
    versions = [m.to_version for m in MIGRATIONS]
    assert versions == list(range(2, 2 + len(versions)))
