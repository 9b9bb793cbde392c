"""Schema migrations: version 1 files are backed up, then upgraded in one transaction."""

import sqlite3
from pathlib import Path

import peewee
import pytest

from smith_tui.store import Store, migrate
from smith_tui.store.sql_layout import LATEST_VERSION, MIGRATIONS, Migration, create_baseline


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
        assert store.schema_version() == LATEST_VERSION
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


def test_version_2_snapshots_keep_their_text_and_share_one_payload(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    make_v1_database(path)
    db = peewee.SqliteDatabase(str(path))
    db.connect()
    with db.atomic():
        next(m for m in MIGRATIONS if m.to_version == 2).apply(db)
        db.execute_sql("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        schemas = '[{"function":{"name":"bash"},"type":"function"}]'
        for row_id, prompt in ((1, "You are Smith."), (2, "You are Smith."), (3, "You are Tank.")):
            db.execute_sql(
                "INSERT INTO request_snapshots (id, conversation_id, turn_id, created_at, model,"
                " system_prompt, tool_schemas) VALUES (?, 'conv1', 't1', 5.0, 'm', ?, ?)",
                (row_id, prompt, schemas),
            )
    db.close()

    with Store.open(path) as store:
        assert store.schema_version() == LATEST_VERSION
        backup = store.backup_path
        assert backup is not None and backup.name.startswith("smith.db.bak-v2-")
        got = store.snapshots.list_for_conversation("conv1")
        assert [(s.id, s.system_prompt, s.turn_id, s.model) for s in got] == [
            (1, "You are Smith.", "t1", "m"),
            (2, "You are Smith.", "t1", "m"),
            (3, "You are Tank.", "t1", "m"),
        ]
        bash = [{"function": {"name": "bash"}, "type": "function"}]
        assert [s.tool_schemas for s in got] == [bash, bash, bash]
        assert store.snapshots.payload_count() == 2
    assert "request_snapshots_v3" not in tables(path)
