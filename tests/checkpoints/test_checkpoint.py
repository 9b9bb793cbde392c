"""Checkpoints on real git repositories: what is recorded, what a restore puts back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from smith_tui.tools.checkpoints.shadow_repo import Change, Checkpoints, CheckpointTooBig
from tests.checkpoints.support import checkpoints_for, git, hash_git_dir, make_repo, tree_of


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project")


@pytest.fixture
def cps(repo: Path, tmp_path: Path) -> Checkpoints:
    return checkpoints_for(repo, tmp_path / "data")


def _turn(cps: Checkpoints, change: object) -> None:
    """Record a checkpoint, let ``change()`` act as the turn, then finish it."""
    item = cps.record_turn("turn-1", "conv-1", "do things")
    change()  # type: ignore[operator]
    cps.finish(item)


def test_undo_puts_back_edits_new_deleted_renamed_and_binary_files(
    repo: Path, cps: Checkpoints
) -> None:
    before = tree_of(repo)

    def turn() -> None:
        (repo / "src" / "app.py").write_text("def main():\n    return 2\n")
        (repo / "src" / "new.py").write_text("NEW = 1\n")
        (repo / "README.md").unlink()
        (repo / "src" / "util.py").rename(repo / "src" / "helpers.py")
        (repo / "logo.bin").write_bytes(b"\x00\xff" * 100)
        (repo / "data.bin").write_bytes(bytes(range(255, -1, -1)))

    _turn(cps, turn)
    result = cps.undo()

    assert result is not None
    assert tree_of(repo) == before
    assert set(result.changes) == {
        Change("M", "src/app.py"),
        Change("D", "src/new.py"),
        Change("A", "README.md"),
        Change("A", "src/util.py"),
        Change("D", "src/helpers.py"),
        Change("M", "logo.bin"),
        Change("D", "data.bin"),
    }


def test_turn_changes_name_every_file_the_turn_touched(repo: Path, cps: Checkpoints) -> None:
    def turn() -> None:
        (repo / "src" / "util.py").rename(repo / "src" / "moved.py")
        (repo / "notes.txt").write_text("x\n")

    _turn(cps, turn)
    [item] = cps.list()
    assert {c.path for c in cps.turn_changes(item)} == {"src/util.py", "src/moved.py", "notes.txt"}
    diff = cps.diff(item.before, item.after or "")
    assert "rename from src/util.py" in diff and "+x" in diff


def test_untracked_files_are_recorded_and_ignored_files_are_never_touched(
    repo: Path, cps: Checkpoints
) -> None:
    (repo / "scratch.txt").write_text("untracked before the turn\n")

    def turn() -> None:
        (repo / "scratch.txt").write_text("changed by the turn\n")
        (repo / "debug.log").write_text("log written during the turn\n")
        (repo / "build" / "new.o").write_bytes(b"built during the turn")

    _turn(cps, turn)
    result = cps.undo()

    assert result is not None
    assert (repo / "scratch.txt").read_text() == "untracked before the turn\n"
    # ignored files keep whatever the turn left: neither restored nor deleted
    assert (repo / "debug.log").read_text() == "log written during the turn\n"
    assert (repo / "build" / "new.o").read_bytes() == b"built during the turn"
    assert (repo / "build" / "out.o").read_bytes() == b"\x7fELF ignored"
    assert all(not c.path.endswith((".log", ".o")) for c in result.changes)


def test_the_users_info_exclude_and_global_excludes_file_are_honoured(
    repo: Path, cps: Checkpoints, tmp_path: Path
) -> None:
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("secret.env\n")
    ignore = tmp_path / "home" / ".config" / "git" / "ignore"
    ignore.parent.mkdir(parents=True)
    ignore.write_text("*.swp\n")
    (repo / "secret.env").write_text("TOKEN=1\n")
    (repo / "file.swp").write_text("swap\n")
    item = cps.record_turn()
    (repo / "secret.env").write_text("TOKEN=2\n")
    (repo / "file.swp").unlink()
    (repo / "src" / "app.py").write_text("changed\n")
    cps.finish(item)

    result = cps.undo()

    assert result is not None
    assert [c.path for c in result.changes] == ["src/app.py"]
    assert (repo / "secret.env").read_text() == "TOKEN=2\n"
    assert not (repo / "file.swp").exists()


def test_undo_of_an_undo_brings_the_turns_changes_back(repo: Path, cps: Checkpoints) -> None:
    def turn() -> None:
        (repo / "src" / "app.py").write_text("turn version\n")
        (repo / "added.txt").write_text("added\n")

    _turn(cps, turn)
    after_turn = tree_of(repo)
    first = cps.undo()
    assert first is not None and "added.txt" not in tree_of(repo)

    second = cps.undo()

    assert second is not None
    assert second.checkpoint.id == first.undo.id
    assert tree_of(repo) == after_turn
    assert [c.kind for c in cps.list()] == ["turn", "restore", "restore"]


def test_uncommitted_user_changes_from_before_the_turn_survive(
    repo: Path, cps: Checkpoints
) -> None:
    (repo / "src" / "app.py").write_text("user's uncommitted edit\n")
    (repo / "README.md").unlink()
    git(repo, "add", "src/app.py")  # staged, too
    status_before = git(repo, "status", "--porcelain")

    def turn() -> None:
        (repo / "src" / "app.py").write_text("the turn's edit\n")
        (repo / "src" / "util.py").unlink()

    _turn(cps, turn)
    cps.undo()

    assert (repo / "src" / "app.py").read_text() == "user's uncommitted edit\n"
    assert not (repo / "README.md").exists()
    assert (repo / "src" / "util.py").exists()
    assert git(repo, "status", "--porcelain") == status_before


def test_the_users_git_folder_is_byte_identical_after_checkpoint_and_restore(
    repo: Path, cps: Checkpoints
) -> None:
    (repo / "src" / "app.py").write_text("uncommitted\n")
    git(repo, "add", "src/app.py")
    git(repo, "status")  # let git refresh its index now, not during the test
    before = hash_git_dir(repo)

    def turn() -> None:
        (repo / "src" / "app.py").write_text("turn\n")
        (repo / "other.txt").write_text("other\n")

    _turn(cps, turn)
    cps.undo()
    cps.undo()
    cps.record_turn()

    assert hash_git_dir(repo) == before
    assert not (repo / ".git" / "refs" / "stash").exists()


def test_hostile_gitattributes_cannot_run_a_filter_or_change_bytes(
    repo: Path, cps: Checkpoints, tmp_path: Path
) -> None:
    marker = tmp_path / "filter-ran"
    git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    git(repo, "config", "filter.evil.smudge", f"touch {marker}; cat")
    (repo / ".gitattributes").write_text("* filter=evil text eol=crlf ident\n")
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\n$Id$\n")
    original = (repo / "crlf.txt").read_bytes()

    _turn(cps, lambda: (repo / "crlf.txt").write_bytes(b"changed\n"))
    cps.undo()

    assert (repo / "crlf.txt").read_bytes() == original
    assert not marker.exists()


def test_executable_bits_and_symlinks_are_restored(repo: Path, cps: Checkpoints) -> None:
    script = repo / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    (repo / "link").symlink_to("src/app.py")

    def turn() -> None:
        script.unlink()
        (repo / "link").unlink()

    _turn(cps, turn)
    cps.undo()

    assert os.access(script, os.X_OK)
    assert os.readlink(repo / "link") == "src/app.py"


def test_deleted_folders_come_back_and_new_empty_folders_go(repo: Path, cps: Checkpoints) -> None:
    def turn() -> None:
        for path in (repo / "src").iterdir():
            path.unlink()
        (repo / "src").rmdir()
        (repo / "deep" / "er").mkdir(parents=True)
        (repo / "deep" / "er" / "file.txt").write_text("x\n")

    _turn(cps, turn)
    cps.undo()

    assert (repo / "src" / "app.py").exists()
    assert not (repo / "deep").exists()


def test_a_tree_over_the_size_limit_is_refused_with_a_clear_notice(
    repo: Path, tmp_path: Path
) -> None:
    cps = checkpoints_for(repo, tmp_path / "data", max_bytes=1024)
    (repo / "big.dat").write_bytes(b"x" * 4096)

    with pytest.raises(CheckpointTooBig) as caught:
        cps.record_turn()

    assert "checkpoints.max_bytes" in caught.value.message
    assert "cannot be undone" in caught.value.message
    assert cps.list() == []


def test_nothing_changed_gives_the_same_tree_and_no_undo(repo: Path, cps: Checkpoints) -> None:
    first = cps.record_turn()
    second = cps.record_turn()
    assert first.before == second.before
    assert cps.undo() is None


def test_checkpoints_persist_for_a_new_process(repo: Path, tmp_path: Path) -> None:
    first = checkpoints_for(repo, tmp_path / "data")
    _turn(first, lambda: (repo / "README.md").write_text("changed\n"))

    later = checkpoints_for(repo, tmp_path / "data")
    [item] = later.list()
    assert item.turn_id == "turn-1" and item.prompt == "do things" and item.after
    assert later.undo() is not None
    assert (repo / "README.md").read_text() == "# demo\n"


def test_the_shadow_repository_lives_under_the_data_folder(
    repo: Path, cps: Checkpoints, tmp_path: Path
) -> None:
    cps.record_turn()
    assert tmp_path / "data" in cps.shadow.parents
    assert (cps.shadow / "HEAD").is_file()
    assert not (repo / ".git" / "smith-checkpoints.jsonl").exists()


def test_a_folder_that_is_not_a_git_repository_works_too(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a\n")
    cps = checkpoints_for(plain, tmp_path / "data")
    _turn(cps, lambda: (plain / "a.txt").write_text("b\n"))
    cps.undo()
    assert (plain / "a.txt").read_text() == "a\n"


def test_a_folder_turned_into_a_symlink_out_is_never_written_or_deleted_through(
    repo: Path, cps: Checkpoints, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("outside, must stay\n")
    (outside / "util.py").write_text("outside too\n")
    before = tree_of(repo)

    def turn() -> None:
        # the turn swaps the src folder for a symlink to a folder outside the project
        (repo / "src").rename(tmp_path / "src-moved")
        (repo / "src").symlink_to(outside)

    _turn(cps, turn)
    cps.undo()

    assert (outside / "app.py").read_text() == "outside, must stay\n"
    assert sorted(os.listdir(outside)) == ["app.py", "util.py"]
    assert not (repo / "src").is_symlink()
    assert tree_of(repo) == before
