"""The database is private: folder 0700, file and its -wal/-shm 0600, backups 0600."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from smith_tui.store import Store, StoreError
from tests.store.test_migrations import make_v1_database


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The common 022 umask, under which SQLite alone would create a 0644 file."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_a_fresh_path_gets_a_private_folder_and_private_files(tmp_path: Path) -> None:
    path = tmp_path / "home" / "data" / "smith.db"
    with Store.open(path) as store:
        store.conversations.create("p1", title="t")
        assert mode(path.parent) == 0o700
        assert mode(path) == 0o600
        for side in ("smith.db-wal", "smith.db-shm"):
            assert mode(path.with_name(side)) == 0o600, side


def test_the_default_data_folder_and_an_old_database_are_narrowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    folder = tmp_path / "smith"
    with Store.open(folder / "smith.db"):
        pass
    # As an older Smith (or a careless copy) left them.
    os.chmod(folder, 0o755)
    os.chmod(folder / "smith.db", 0o644)
    with Store.open() as store:
        assert store.path == folder / "smith.db"
        assert mode(folder) == 0o700
        assert mode(folder / "smith.db") == 0o600
        assert mode(folder / "smith.db-wal") == 0o600


def test_an_existing_folder_named_with_db_keeps_its_mode(tmp_path: Path) -> None:
    shared = tmp_path / "project"
    shared.mkdir()
    os.chmod(shared, 0o755)
    with Store.open(shared / "smith.db"):
        assert mode(shared) == 0o755
        assert mode(shared / "smith.db") == 0o600


def test_a_pre_migration_backup_is_private(tmp_path: Path) -> None:
    path = tmp_path / "smith.db"
    make_v1_database(path)
    with Store.open(path) as store:
        assert store.backup_path is not None
        assert mode(store.backup_path) == 0o600
        assert mode(path) == 0o600


def test_a_foreign_file_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("just some notes, not a database\n")
    os.chmod(path, 0o644)
    with pytest.raises(StoreError, match="not a Smith database"):
        Store.open(path)
    assert mode(path) == 0o644
