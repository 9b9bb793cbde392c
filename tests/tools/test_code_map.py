"""code_map: folder tree with counts plus top-level symbols of relevant files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.tools.builtin.code.map import TOOL
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import project_context, tool_budget
from tests.support.tools import write_file as write

handler = TOOL.run  # validates like the executor, then runs the handler


def ctx_for(root: Path, **config: Any) -> ToolContext:
    return project_context(root, "direct", **config)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, "README.md", "# demo\n")
    write(tmp_path, "pyproject.toml", "[project]\n")
    write(
        tmp_path,
        "app/cli.py",
        "class Runner:\n    def go(self):\n        pass\n\n    def stop(self):\n        pass\n\n"
        "def main():\n    pass\n\ndef _private():\n    pass\n",
    )
    write(tmp_path, "app/core/engine.py", "class Engine:\n    pass\n" + "# filler\n" * 200)
    write(tmp_path, "app/core/deep/er/leaf.py", "def leaf():\n    pass\n")
    write(tmp_path, "tests/test_cli.py", "def test_main():\n    pass\n")
    write(tmp_path, "web/index.ts", "export function render(): void {}\n")
    write(tmp_path, "dist/bundle.js", "function ignored() {}\n")
    write(tmp_path, ".cache/x.py", "def hidden():\n    pass\n")
    write(tmp_path, ".gitignore", "dist/\n")
    return tmp_path


async def test_tree_with_counts_depth_limited(project: Path) -> None:
    out = await handler({"depth": 2}, ctx_for(project))
    tree = out.content.split("\n\n")[0].splitlines()
    assert tree == [
        "Folders of the project to depth 2 (file counts include subfolders):",
        "./ (7 files)",
        "  app/ (3 files)",
        "    core/ (2 files)",
        "  tests/ (1 file)",
        "  web/ (1 file)",
        "  README.md",
        "  pyproject.toml",
    ]
    assert "dist" not in out.content and ".cache" not in out.content
    assert out.metadata["files"] == 7


async def test_deeper_depth_shows_more_levels(project: Path) -> None:
    out = await handler({"depth": 4, "max_files": 0}, ctx_for(project))
    assert "        er/ (1 file)" in out.content
    assert "Top-level symbols" not in out.content


async def test_symbols_of_relevant_files(project: Path) -> None:
    out = await handler({}, ctx_for(project))
    symbols = out.content.split("Top-level symbols", 1)[1]
    assert "app/cli.py (+1 private top-level name" in symbols
    assert "class Runner (+2 members)" in symbols
    assert "function main" in symbols
    assert "_private" not in symbols
    assert "function render" in symbols
    # Entry points and substantial files come before tests.
    order = [line for line in symbols.splitlines()[1:] if line and not line.startswith(" ")]
    assert order.index("tests/test_cli.py") > order.index("app/cli.py (+1 private top-level name)")


async def test_path_maps_one_folder(project: Path) -> None:
    out = await handler({"path": "app", "max_files": 1}, ctx_for(project))
    lines = out.content.splitlines()
    assert lines[1] == "app/ (3 files)"
    assert "  core/ (2 files)" in lines
    assert "tests" not in out.content


async def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = await handler({"path": "empty"}, ctx_for(tmp_path))
    assert out.content == "No files under empty (hidden and ignored files are not listed)."


async def test_budget_is_respected(tmp_path: Path) -> None:
    for n in range(60):
        write(tmp_path, f"pkg{n:02}/mod.py", "".join(f"def f{k}():\n    pass\n" for k in range(30)))
    out = await handler(
        {"max_files": 50}, ctx_for(tmp_path, services=tool_budget("code_map", 3000))
    )
    assert len(out.content) <= 3000
    assert "left out to fit" in out.content


def test_spec_shape() -> None:
    assert TOOL.name == "code_map"
    assert "required" not in TOOL.input_schema


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"depth": 0}, "`depth` must be an integer between 1 and 6"),
        ({"depth": 7}, "`depth` must be an integer between 1 and 6"),
        ({"max_files": 51}, "`max_files` must be an integer between 0 and 50"),
        ({"path": "README.md"}, "`path` 'README.md' is not a directory"),
        ({"path": "nowhere"}, "does not exist"),
        ({"path": "/"}, "is outside the project root"),
        ({"query": "x"}, "unknown argument `query`"),
    ],
)
async def test_bad_arguments(project: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        await handler(args, ctx_for(project))
    assert message in caught.value.message
