"""Project instructions (AGENTS.md / CLAUDE.md layers) read from real folders in a git repo."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import pytest

from smith_tui.engine.instructions import MAX_FILE_BYTES, RULE
from smith_tui.engine.prompt import build_system_prompt
from smith_tui.engine.roles import resolve_role
from smith_tui.engine.scope import TurnScope, compute_scope
from tests.support.runtime import make_git_repo


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with instruction files at its root and in two nested folders, and a
    user config folder with its own AGENTS.md."""
    repo = make_git_repo(tmp_path / "repo").resolve()
    user = tmp_path / "config" / "smith"
    user.mkdir(parents=True)
    (user / "AGENTS.md").write_text("Answer in English.\n", encoding="utf-8")
    (repo / "AGENTS.md").write_text("Run `make check`.\n", encoding="utf-8")
    (repo / "web" / "ui" / "widgets").mkdir(parents=True)
    (repo / "web" / "AGENTS.md").write_text("Web: use pnpm.\n", encoding="utf-8")
    (repo / "web" / "ui" / "AGENTS.md").write_text("UI: no inline styles.\n", encoding="utf-8")
    (repo / "lib" / "core").mkdir(parents=True)
    return repo, user


def scope_in(cwd: Path, user: Path | None, index_file: str = "INDEX.md") -> TurnScope:
    return compute_scope(cwd, index_file, user_dir=user)


def test_layers_in_order_user_repository_nearest_folder(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    scope = scope_in(repo / "web" / "ui" / "widgets", user)
    assert [(f.layer, f.shown_as) for f in scope.instructions] == [
        ("user", str(user / "AGENTS.md")),
        ("repository", "AGENTS.md"),
        ("folder", "web/ui/AGENTS.md"),  # the nearest one only: web/AGENTS.md is not loaded
    ]
    prompt = build_system_prompt(resolve_role("direct"), scope)
    block = prompt[prompt.index("## Project instructions") :]
    assert block == "\n\n".join(
        [
            "## Project instructions",
            RULE,
            f"### Your instructions: {user / 'AGENTS.md'}",
            "Answer in English.",
            "### Repository: AGENTS.md",
            "Run `make check`.",
            "### Folder: web/ui/AGENTS.md (applies to the files under web/ui/)",
            "UI: no inline styles.",
        ]
    )
    assert scope.warnings == ()


def test_work_under_a_folder_is_the_turn_cwd(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    assert [f.shown_as for f in scope_in(repo / "web", user).instructions][-1] == "web/AGENTS.md"
    at_root = scope_in(repo, user).instructions
    assert [f.layer for f in at_root] == ["user", "repository"]  # nested files are not loaded
    assert [f.layer for f in scope_in(repo / "lib" / "core", user).instructions] == [
        "user",
        "repository",
    ]


def test_claude_md_is_read_where_a_folder_has_no_agents_md(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    (repo / "lib" / "CLAUDE.md").write_text("Lib rules from Claude Code.\n", encoding="utf-8")
    (repo / "CLAUDE.md").write_text("never read: the root has an AGENTS.md\n", encoding="utf-8")
    (user / "AGENTS.md").unlink()
    (user / "CLAUDE.md").write_text("User CLAUDE.md\n", encoding="utf-8")
    scope = scope_in(repo / "lib" / "core", user)
    assert [(f.layer, Path(f.shown_as).name, f.text) for f in scope.instructions] == [
        ("user", "CLAUDE.md", "User CLAUDE.md\n"),
        ("repository", "AGENTS.md", "Run `make check`.\n"),
        ("folder", "CLAUDE.md", "Lib rules from Claude Code.\n"),
    ]


def test_no_files_no_block(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    scope = scope_in(repo, tmp_path / "nothing-here")
    assert scope.instructions == ()
    assert "## Project instructions" not in build_system_prompt(resolve_role("direct"), scope)


def test_index_file_stays_and_is_not_read_twice(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    (repo / "INDEX.md").write_text("the index\n", encoding="utf-8")
    scope = scope_in(repo, user)
    prompt = build_system_prompt(resolve_role("direct"), scope)
    assert prompt.index("## Project instructions") < prompt.index("## Project context\nthe index")
    # index_file naming AGENTS.md: it is the project context, not a second copy
    same = scope_in(repo, user, index_file="AGENTS.md")
    assert [f.layer for f in same.instructions] == ["user"]
    assert same.index_content == "Run `make check`.\n"


def test_a_big_file_is_cut_with_a_notice_naming_it(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    line = "x" * 99 + "\n"
    (repo / "AGENTS.md").write_text(line * 500, encoding="utf-8")  # 50,000 bytes
    scope = scope_in(repo, user)
    root_file = scope.instructions[1]
    assert root_file.cut and root_file.size == 50_000
    assert root_file.shown <= MAX_FILE_BYTES and root_file.shown % 100 == 0  # whole lines
    prompt = build_system_prompt(resolve_role("direct"), scope)
    assert f"[AGENTS.md cut: showing the first {root_file.shown} of 50000 bytes]" in prompt
    assert scope.warnings == (
        f"AGENTS.md is 50000 bytes; only the first {root_file.shown} are in the system prompt",
    )


def test_total_cap_leaves_the_last_file_out_by_name(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    line = "y" * 99 + "\n"
    (user / "AGENTS.md").write_text(line * 400, encoding="utf-8")
    (repo / "AGENTS.md").write_text(line * 400, encoding="utf-8")
    scope = compute_scope(
        repo / "web", "INDEX.md", user_dir=user
    )  # defaults: 32 KiB each, 64 KiB together
    shown = [f.shown for f in scope.instructions]
    assert sum(shown) <= 64 * 1024
    assert scope.instructions[-1].shown_as == "web/AGENTS.md"
    assert scope.instructions[-1].shown == 0
    prompt = build_system_prompt(resolve_role("direct"), scope)
    assert "[web/AGENTS.md left out: the instruction files reached their size cap]" in prompt
    assert any("web/AGENTS.md was left out of the system prompt" in w for w in scope.warnings)


def test_a_fifo_agents_md_is_refused_without_blocking(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    (repo / "web" / "AGENTS.md").unlink()
    os.mkfifo(repo / "web" / "AGENTS.md")
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(scope_in, repo / "web", user)
        try:
            scope = future.result(timeout=30)
        except FutureTimeout:
            with open(os.open(repo / "web" / "AGENTS.md", os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
            pytest.fail("reading a FIFO AGENTS.md hung")
    assert [f.layer for f in scope.instructions] == ["user", "repository"]
    assert scope.warnings == (
        f"{repo / 'web' / 'AGENTS.md'} is a FIFO (named pipe), not a regular file; it was ignored",
    )


def test_a_symlink_out_of_the_project_is_refused(layout: tuple[Path, Path], tmp_path: Path) -> None:
    repo, user = layout
    secret = tmp_path / "secret.txt"
    secret.write_text("private", encoding="utf-8")
    (repo / "AGENTS.md").unlink()
    (repo / "AGENTS.md").symlink_to(secret)
    scope = scope_in(repo, user)
    assert [f.layer for f in scope.instructions] == ["user"]
    assert "private" not in build_system_prompt(resolve_role("direct"), scope)
    assert scope.warnings == (
        f"{repo / 'AGENTS.md'} resolves to {secret.resolve()}, outside the project {repo}; "
        "it was ignored",
    )


def test_the_same_files_give_the_same_bytes(layout: tuple[Path, Path]) -> None:
    repo, user = layout
    role = resolve_role("direct")
    first = build_system_prompt(role, scope_in(repo / "web", user))
    assert build_system_prompt(role, scope_in(repo / "web", user)) == first
    (repo / "web" / "AGENTS.md").write_text("Web: use npm.\n", encoding="utf-8")
    changed = build_system_prompt(role, scope_in(repo / "web", user))
    assert changed != first and "Web: use npm." in changed
