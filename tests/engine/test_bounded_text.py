"""The one bounded reader (engine/bounded_text.read_text) as its two kinds of caller use it:
the system prompt's files are cut and repaired, the setup files are whole or refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from smith_tui.engine.bounded_text import (
    LinkRefusedError,
    NotUtf8Error,
    OutsideError,
    TooLargeError,
    read_bounded,
    read_text,
)
from smith_tui.engine.setup_files import (
    MAX_SETUP_FILE_BYTES,
    Origin,
    SetupFileError,
    read_setup_file,
)
from smith_tui.tools.files import NotRegularFileError


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    return root.resolve()


def _origin(project: Path) -> Origin:
    return Origin("project", project / ".claude" / "agents", ".claude/agents", project)


def test_one_reader_two_policies(project: Path) -> None:
    big = project / "big.md"
    big.write_bytes(b"line\n" * 300)  # 1500 bytes
    cut = read_text(big, 1000, inside=project)
    assert cut.cut and cut.shown == 1000 and cut.size == 1500 and cut.text.endswith("line\n")
    with pytest.raises(TooLargeError):
        read_text(big, 1000, inside=project, cut=False)
    latin = project / "latin.md"
    latin.write_bytes(b"caf\xe9\n")
    assert read_text(latin, 1000).replaced and read_text(latin, 1000).text == "caf\ufffd\n"
    with pytest.raises(NotUtf8Error) as caught:
        read_text(latin, 1000, replace=False)
    assert caught.value.start == 3


def test_the_same_refusals_for_every_caller(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("SECRET\n")
    link = project / "AGENTS.md"
    link.symlink_to(outside)
    os.mkfifo(project / "pipe.md")
    with pytest.raises(OutsideError):
        read_text(link, 1000, inside=project)
    with pytest.raises(NotRegularFileError):
        read_text(project / "pipe.md", 1000, inside=project)
    inner = project / "inner.md"
    inner.symlink_to(project / "pipe.md")
    with pytest.raises(LinkRefusedError):
        read_text(inner, 1000, inside=project, final_link=False)
    # The system prompt's wording: a warning line, never an error.
    warnings: list[str] = []
    assert read_bounded(link, 1000, warnings, label="AGENTS.md", inside=project) is None
    assert read_bounded(project / "missing.md", 1000, warnings, label="x") is None
    assert warnings == [
        f"{link} resolves to {outside}, outside the project {project}; it was ignored"
    ]


def test_setup_files_are_whole_or_refused(project: Path, tmp_path: Path) -> None:
    origin = _origin(project)
    folder = origin.folder
    (folder / "big.md").write_bytes(b"x" * (MAX_SETUP_FILE_BYTES + 1))
    (folder / "latin.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    target = project / "elsewhere.md"
    target.write_text("---\nname: linked\n---\n")
    (folder / "link.md").symlink_to(target)
    with pytest.raises(SetupFileError, match="larger than 256 KB"):
        read_setup_file(origin, folder / "big.md")
    with pytest.raises(SetupFileError, match=r"not UTF-8 text \(byte 13\)"):
        read_setup_file(origin, folder / "latin.md")
    with pytest.raises(SetupFileError, match="symbolic link"):
        read_setup_file(origin, folder / "link.md")
    # The user's own files may be links (a dotfiles folder): followed.
    mine = Origin("user", folder, "~/.config/smith/agents")
    assert read_setup_file(mine, folder / "link.md") == "---\nname: linked\n---\n"
