"""code_outline: one file's symbols, nested, on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.tools.builtin.code.outline import TOOL
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import project_context, tool_budget

handler = TOOL.run  # validates like the executor, then runs the handler


def ctx_for(root: Path, **config: Any) -> ToolContext:
    return project_context(root, "explorer", **config)


PYTHON = """import os

LIMIT = 5


class Store:
    def get(self, key):
        def fallback():
            return None
        return fallback()

    def put(self, key, value):
        pass


async def main() -> None:
    pass
"""


async def test_python_outline_nests_by_indentation(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "store.py").write_text(PYTHON)
    out = await handler({"path": "pkg/store.py"}, ctx_for(tmp_path))
    assert out.content.splitlines() == [
        "pkg/store.py (python, 17 lines, 6 symbols)",
        "     3  LIMIT = 5  (constant)",
        "     6  class Store:  (class)",
        "     7    def get(self, key):  (method)",
        "     8      def fallback():  (function)",
        "    12    def put(self, key, value):  (method)",
        "    16  async def main() -> None:  (function)",
    ]
    assert out.metadata == {"path": "pkg/store.py", "language": "python", "symbols": 6, "shown": 6}


async def test_rust_outline_nests_impl_members(tmp_path: Path) -> None:
    (tmp_path / "lib.rs").write_text("struct A;\nimpl A {\n    fn new() -> A { A }\n}\n")
    out = await handler({"path": str(tmp_path / "lib.rs")}, ctx_for(tmp_path))
    assert "     2  impl A  (impl)" in out.content
    assert "     3    fn new() -> A { A }  (method)" in out.content


async def test_file_without_definitions(tmp_path: Path) -> None:
    (tmp_path / "empty.go").write_text("package main\n")
    out = await handler({"path": "empty.go"}, ctx_for(tmp_path))
    assert out.content == "empty.go (go, 1 line, 0 symbols)\nNo definitions found."


async def test_budget_cuts_long_outlines(tmp_path: Path) -> None:
    (tmp_path / "many.py").write_text(
        "".join(f"def function_number_{n}():\n    pass\n" for n in range(400))
    )
    out = await handler(
        {"path": "many.py"}, ctx_for(tmp_path, services=tool_budget("code_outline", 2000))
    )
    assert len(out.content) <= 2000
    assert (
        "more symbols" in out.content and "left out to fit the 2000-character budget" in out.content
    )


def test_spec_shape() -> None:
    assert TOOL.name == "code_outline"
    assert TOOL.input_schema["required"] == ["path"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `path`"),
        ({"path": 1}, "`path` must be a string"),
        ({"path": "missing.py"}, "`path` 'missing.py' does not exist"),
        ({"path": "folder"}, "`path` 'folder' is not a regular file"),
        ({"path": "../outside.py"}, "is outside the project root"),
        ({"path": "notes.txt"}, "no symbol outline for 'notes.txt'"),
        ({"path": "blob.py"}, "'blob.py' is binary, unreadable or larger than"),
        ({"path": ".git/hooks.py"}, "inside .git"),
        ({"path": "a.py", "depth": 2}, "unknown argument `depth`"),
    ],
)
async def test_bad_arguments(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    root = tmp_path / "root"
    (root / "folder").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "hooks.py").write_text("def x(): pass\n")
    (root / "a.py").write_text("def x(): pass\n")
    (root / "notes.txt").write_text("hello\n")
    (root / "blob.py").write_bytes(b"\x00\x01\x02def")
    (tmp_path / "outside.py").write_text("def x(): pass\n")
    with pytest.raises(ToolError) as caught:
        await handler(args, ctx_for(root))
    assert message in caught.value.message
