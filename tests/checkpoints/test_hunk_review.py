"""Per-hunk review on real git repositories: a reverted hunk goes back, every other byte
stays, the user's .git is never touched, and /undo takes the review back."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.tools.checkpoints.hunk_review import (
    WHOLE_FILE,
    apply_review,
    review_files,
    review_note,
)
from smith_tui.tools.checkpoints.shadow_repo import Checkpoint, CheckpointError, Checkpoints
from tests.checkpoints.support import checkpoints_for, hash_git_dir, make_repo

OLD = "".join(f"line {n}\r\n" for n in range(1, 31))


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "project")
    (repo / "crlf.txt").write_bytes(OLD.encode())
    return repo


@pytest.fixture
def cps(repo: Path, tmp_path: Path) -> Checkpoints:
    return checkpoints_for(repo, tmp_path / "data")


def _three_hunk_turn(repo: Path, cps: Checkpoints) -> Checkpoint:
    item = cps.record_turn("turn-1", "conv-1", "edit things")
    lines = OLD.splitlines(keepends=True)
    lines[2] = "line 3 changed\r\n"  # hunk 0
    lines[14:16] = ["inserted a\r\n", "inserted b\r\n", "inserted c\r\n"]  # hunk 1
    del lines[26]  # hunk 2: "line 26" (the insert moved the indexes by one)
    (repo / "crlf.txt").write_bytes("".join(lines).encode())
    (repo / "added.py").write_text("NEW = 1\n")
    return cps.finish(item)


def test_reverting_one_hunk_leaves_the_other_hunks_byte_identical(
    repo: Path, cps: Checkpoints
) -> None:
    checkpoint = _three_hunk_turn(repo, cps)
    after = (repo / "crlf.txt").read_bytes()
    git_before = hash_git_dir(repo)
    files = {f.path: f for f in review_files(cps, checkpoint)}
    assert set(files) == {"crlf.txt", "added.py"}
    assert len(files["crlf.txt"].hunks) == 3 and files["added.py"].whole_only == "added"

    result = apply_review(cps, checkpoint, {"crlf.txt": {1}})
    now = (repo / "crlf.txt").read_bytes()
    expected = after.replace(
        b"inserted a\r\ninserted b\r\ninserted c\r\n", b"line 15\r\nline 16\r\n"
    )
    assert now == expected  # hunks 0 and 2 as the turn left them, CRLF kept
    assert b"line 3 changed\r\n" in now and b"line 26\r\n" not in now
    assert result.reverted == {"crlf.txt": [files["crlf.txt"].hunks[1].header()]}
    assert hash_git_dir(repo) == git_before  # the user's repository untouched
    note = review_note(result, "turn 1 · ‘edit things’")
    assert "crlf.txt" in note and "Do not make these changes again" in note

    # The review is a restore checkpoint: /undo (undo of the last change) takes it back.
    cps.undo()
    assert (repo / "crlf.txt").read_bytes() == after


def test_whole_files_go_back_and_a_file_changed_since_is_refused(
    repo: Path, cps: Checkpoints
) -> None:
    checkpoint = _three_hunk_turn(repo, cps)
    apply_review(cps, checkpoint, {"added.py": WHOLE_FILE, "crlf.txt": WHOLE_FILE})
    assert not (repo / "added.py").exists()
    assert (repo / "crlf.txt").read_bytes() == OLD.encode()

    later = _three_hunk_turn(repo, cps)
    left = (repo / "crlf.txt").read_bytes()
    with pytest.raises(CheckpointError, match="hunks 0-2, not \\[9\\]"):
        apply_review(cps, later, {"added.py": WHOLE_FILE, "crlf.txt": {0, 9}})
    with pytest.raises(CheckpointError, match="only be reverted whole"):
        apply_review(cps, later, {"added.py": {0}})
    (repo / "crlf.txt").write_bytes(b"someone edited it after the turn\n")
    with pytest.raises(CheckpointError, match="changed after this turn"):
        apply_review(cps, later, {"crlf.txt": {0}})
    # Nothing was written by the refused reviews.
    assert (repo / "crlf.txt").read_bytes() == b"someone edited it after the turn\n"
    assert (repo / "added.py").exists() and left.count(b"inserted") == 3
