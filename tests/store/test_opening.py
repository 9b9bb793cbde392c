"""Opening: new files, default location, and files that must be refused and left untouched."""

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from smith_tui.store import Store, StoreError, default_db_path
from smith_tui.store.sql_layout import LATEST_VERSION


def fingerprint(path: Path) -> tuple[str, list[str]]:
    """The file's SHA-256 and the names in its folder (to catch -wal/-shm side files)."""
    return hashlib.sha256(path.read_bytes()).hexdigest(), sorted(os.listdir(path.parent))


def refuse(path: Path, *fragments: str) -> str:
    before = fingerprint(path)
    with pytest.raises(StoreError) as caught:
        Store.open(path)
    message = str(caught.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message
    assert fingerprint(path) == before
    return message


def make_smith_db(path: Path, messages: int = 0) -> None:
    with Store.open(path) as store:
        cid = store.conversations.create("p")
        for i in range(0, messages, 10):
            store.conversations.append_messages(
                cid, [{"role": "user", "content": f"message {i + j} " * 40} for j in range(10)]
            )


def test_new_path_is_created_with_parents_and_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "smith.db"
    with Store.open(path) as store:
        db = store.database
        assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute_sql("PRAGMA busy_timeout").fetchone()[0] == 10_000
        assert store.schema_version() == LATEST_VERSION
        assert store.backup_path is None
    assert path.is_file()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA application_id").fetchone()[0] == 0x534D5448
    raw.close()


def test_default_path_follows_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "smith" / "smith.db"
    with Store.open() as store:
        assert store.path == tmp_path / "xdg" / "smith" / "smith.db"
    assert (tmp_path / "xdg" / "smith" / "smith.db").is_file()
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "smith" / "smith.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "smith" / "smith.db"


def test_reopening_keeps_data_and_an_empty_file_becomes_a_database(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    path.write_bytes(b"")
    make_smith_db(path, messages=20)
    with Store.open(path) as store:
        (conversation,) = store.conversations.list_all()
        assert store.conversations.count_messages(conversation.id) == 20


def test_a_text_file_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("my shopping list\n" * 200)
    message = refuse(path, "not a Smith database", "not an SQLite file", "--db")
    assert "Traceback" not in message


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        Store.open(tmp_path)


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
def test_another_sqlite_database_is_refused_untouched(tmp_path: Path, journal_mode: str) -> None:
    path = tmp_path / "shop.sqlite"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA journal_mode = {journal_mode}")
    raw.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    raw.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL)")
    raw.execute("INSERT INTO customers (name) VALUES ('Ada')")
    raw.commit()
    raw.close()
    assert sorted(os.listdir(tmp_path)) == ["shop.sqlite"]
    refuse(path, "not a Smith database", "customers, orders", "move this file away")
    assert sorted(os.listdir(tmp_path)) == ["shop.sqlite"]


def test_a_database_of_another_application_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA application_id = 1234")
    raw.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    raw.commit()
    raw.close()
    refuse(path, "another application")


def test_a_meta_table_without_a_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    raw.execute("INSERT INTO meta VALUES ('owner', 'someone else')")
    raw.commit()
    raw.close()
    refuse(path, "not a Smith database", "schema_version")


def test_a_damaged_page_is_reported_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    make_smith_db(path, messages=300)
    raw = sqlite3.connect(path)
    root = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
    page_size = raw.execute("PRAGMA page_size").fetchone()[0]
    raw.close()
    assert sorted(os.listdir(tmp_path)) == ["smith.db"]
    data = bytearray(path.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = (
        bytes([0x0D]) + bytes(range(256)) * (page_size // 256 - 1) + bytes(255)
    )
    path.write_bytes(bytes(data))
    refuse(path, "damaged database", "integrity check", ".bak-v", "--db")


def test_a_damaged_header_is_reported_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    make_smith_db(path, messages=20)
    data = bytearray(path.read_bytes())
    data[16:100] = b"\xff" * 84
    path.write_bytes(bytes(data))
    refuse(path, "damaged database")


def test_a_database_from_a_newer_smith_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    make_smith_db(path)
    raw = sqlite3.connect(path)
    raw.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    raw.commit()
    raw.close()
    refuse(path, "newer Smith", "schema version 99", "Upgrade Smith")


def test_two_stores_in_one_process_stay_separate(tmp_path: Path) -> None:
    with Store.open(tmp_path / "one.db") as one, Store.open(tmp_path / "two.db") as two:
        one.conversations.create("p", "in one")
        two.conversations.create("p", "in two")
        assert [c.title for c in one.conversations.list_all()] == ["in one"]
        assert [c.title for c in two.conversations.list_all()] == ["in two"]


def test_without_verify_the_cheap_checks_still_refuse_foreign_files(tmp_path: Path) -> None:
    path = tmp_path / "shop.sqlite"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    raw.commit()
    raw.close()
    before = fingerprint(path)
    with pytest.raises(StoreError, match="not a Smith database"):
        Store.open(path, verify=False)
    assert fingerprint(path) == before
    make_smith_db(tmp_path / "ok.db", messages=10)
    with Store.open(tmp_path / "ok.db", verify=False) as store:
        assert store.schema_version() == LATEST_VERSION


def test_a_folder_that_cannot_be_created_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create the folder"):
        Store.open(blocker / "smith.db")
