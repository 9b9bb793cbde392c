"""code_files: fuzzy file-name search over the non-ignored files of a real folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.tools.builtin.code.file_search import TOOL, rank_files
from smith_tui.tools.builtin.code.fuzzy import score_path
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import project_context, tool_budget

handler = TOOL.run  # validates like the executor, then runs the handler


def ctx_for(root: Path, **config: Any) -> ToolContext:
    return project_context(root, "orchestrator", **config)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = [
        "smith_tui/cli.py",
        "smith_tui/client/http.py",
        "smith_tui/tools/git.py",
        "smith_tui/tools/code/grep.py",
        "tests/test_cli.py",
        "tests/tools/test_git.py",
        "docs/CLIENT_GUIDE.md",
        "build/cli.py",
        ".secret/cli.py",
        "README.md",
    ]
    for rel in files:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    return tmp_path


def paths_of(content: str) -> list[str]:
    return content.splitlines()[1:]


async def test_exact_basename_ranks_first(project: Path) -> None:
    out = await handler({"query": "cli.py"}, ctx_for(project))
    assert paths_of(out.content)[:2] == ["smith_tui/cli.py", "tests/test_cli.py"]


async def test_subsequence_matching_across_the_path(project: Path) -> None:
    out = await handler({"query": "toolsgit"}, ctx_for(project))
    assert paths_of(out.content)[0] == "smith_tui/tools/git.py"


async def test_basename_match_beats_a_match_spread_over_folders(project: Path) -> None:
    ranked = [path for _, path in rank_files("grep", ["grep/x/y.py", "a/b/grep.py", "g/r/e/p.py"])]
    assert ranked == ["a/b/grep.py", "grep/x/y.py", "g/r/e/p.py"]


async def test_several_terms_must_all_match(project: Path) -> None:
    out = await handler({"query": "tests git"}, ctx_for(project))
    assert paths_of(out.content) == ["tests/tools/test_git.py"]


async def test_case_insensitive_and_word_starts_score_higher() -> None:
    assert score_path("cg", "docs/CLIENT_GUIDE.md") is not None
    assert score_path("cg", "code/grep.py") > score_path("cg", "acxxxgx/zz.py")  # type: ignore[operator]
    # A match inside the base name beats one spread across folders.
    assert score_path("cg", "zzcqqg.py") > score_path("cg", "code/grep.py")  # type: ignore[operator]
    assert score_path("xyz", "abc.py") is None


async def test_ignored_and_hidden_files_are_not_listed(project: Path) -> None:
    out = await handler({"query": "cli", "max_results": 50}, ctx_for(project))
    assert "build/cli.py" not in out.content
    assert ".secret" not in out.content


async def test_max_results_and_header(project: Path) -> None:
    out = await handler({"query": "py", "max_results": 2}, ctx_for(project))
    assert len(paths_of(out.content)) == 2
    assert out.content.splitlines()[0] == "6 of 8 files match 'py' (best 2 shown)"
    assert out.metadata == {"matches": 6, "files_searched": 8}


async def test_no_match(project: Path) -> None:
    out = await handler({"query": "qqqzzz"}, ctx_for(project))
    assert out.ok
    assert out.content.startswith("No file path matches 'qqqzzz' (searched 8 files")


async def test_budget_cuts_paths_with_a_note(tmp_path: Path) -> None:
    for n in range(200):
        (tmp_path / f"module_{n:03}_with_a_long_name.py").write_text("")
    out = await handler(
        {"query": "module", "max_results": 200},
        ctx_for(tmp_path, services=tool_budget("code_files", 800)),
    )
    assert len(out.content) <= 800
    assert "more paths" in out.content and "left out to fit the 800-character budget" in out.content


def test_spec_shape() -> None:
    assert TOOL.name == "code_files"
    assert TOOL.input_schema["required"] == ["query"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `query`"),
        ({"query": "   "}, "`query` must not be empty"),
        ({"query": ["a"]}, "`query` must be a string"),
        ({"query": "a" * 201}, "the limit is 200"),
        ({"query": "a", "max_results": 501}, "`max_results` must be an integer between 1 and 500"),
        ({"query": "a", "max_results": 2.5}, "`max_results` must be an integer"),
        ({"query": "a", "limit": 3}, "unknown argument `limit`"),
    ],
)
async def test_bad_arguments(project: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        await handler(args, ctx_for(project))
    assert message in caught.value.message


async def test_missing_project_root_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="is not a directory"):
        await handler({"query": "a"}, ctx_for(tmp_path / "gone"))
