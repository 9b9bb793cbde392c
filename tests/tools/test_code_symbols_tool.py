"""code_symbols: repository-wide symbol lookup on a real multi-language folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smith_tui.tools.builtin.code.symbols_tool import TOOL, match_tier, split_query
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import project_context

handler = TOOL.run  # validates like the executor, then runs the handler


def ctx_for(root: Path, **config: Any) -> ToolContext:
    return project_context(root, "worker", **config)


SOURCES = {
    "app/server.py": (
        "class Server:\n"
        "    def start(self):\n"
        "        pass\n"
        "\n"
        "    def start_later(self):\n"
        "        pass\n"
        "\n"
        "def restart():\n"
        "    pass\n"
    ),
    "app/deep/more/start.py": "def start():\n    pass\n",
    "lib/engine.lua": "local M = {}\nfunction M.start() end\nfunction M:stop() end\nreturn M\n",
    "native/engine.c": "int start_engine(void)\n{\n    return 0;\n}\n",
    "web/client.ts": "export class Client {\n  start(): void {}\n}\nexport interface Startable {}\n",
    "svc/main.go": "package main\nfunc (s *Service) Start() error {\n\treturn nil\n}\n",
    "core/src/lib.rs": "pub struct Starter;\nimpl Starter {\n    pub fn start(&self) {}\n}\n",
    "tests/test_server.py": "def start():\n    pass\n",
    "README.md": "def start(): this is prose, not code\n",
    "vendor_ignored/x.py": "def start():\n    pass\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for rel, text in SOURCES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / ".gitignore").write_text("vendor_ignored/\n")
    return tmp_path


def section(content: str, label: str) -> list[str]:
    lines = content.splitlines()
    if f"{label} matches:" not in lines:
        return []
    start = lines.index(f"{label} matches:") + 1
    out = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        out.append(line.strip().split("  ")[0])
    return out


async def test_exact_then_prefix_then_substring(project: Path) -> None:
    out = await handler({"name": "start", "max_results": 100}, ctx_for(project))
    exact = section(out.content, "exact")
    prefix = section(out.content, "prefix")
    substring = section(out.content, "substring")
    assert exact[0] == "app/deep/more/start.py:1"  # top-level definitions first
    assert set(exact) == {
        "app/server.py:2",
        "app/deep/more/start.py:1",
        "lib/engine.lua:2",
        "web/client.ts:2",
        "svc/main.go:2",
        "core/src/lib.rs:3",
        "tests/test_server.py:1",
    }
    # Case-exact names before other-case ones ("Start"), test files last among equals.
    assert exact[-2:] == ["tests/test_server.py:1", "svc/main.go:2"]
    assert set(prefix) == {
        "app/server.py:5",
        "native/engine.c:1",
        "web/client.ts:4",
        "core/src/lib.rs:1",  # struct Starter
        "core/src/lib.rs:2",  # impl Starter
    }
    assert substring == ["app/server.py:8"]
    assert "README.md" not in out.content
    assert "vendor_ignored" not in out.content


async def test_rows_show_kind_qualified_name_and_signature(project: Path) -> None:
    out = await handler({"name": "start_later"}, ctx_for(project))
    assert "app/server.py:5  method Server.start_later  — def start_later(self):" in out.content


async def test_kind_filter(project: Path) -> None:
    out = await handler({"name": "start", "kind": "function"}, ctx_for(project))
    assert "method" not in out.content
    assert "app/deep/more/start.py:1" in out.content


async def test_qualified_names_restrict_to_the_parent(project: Path) -> None:
    py = await handler({"name": "Server.start"}, ctx_for(project))
    assert section(py.content, "exact") == ["app/server.py:2"]
    rust = await handler({"name": "Starter::start"}, ctx_for(project))
    assert section(rust.content, "exact") == ["core/src/lib.rs:3"]
    lua = await handler({"name": "M:stop"}, ctx_for(project))
    assert section(lua.content, "exact") == ["lib/engine.lua:3"]


async def test_max_results_and_note(project: Path) -> None:
    out = await handler({"name": "start", "max_results": 2}, ctx_for(project))
    assert "(best 2 shown" in out.content
    assert len(section(out.content, "exact")) == 2


async def test_nothing_found(project: Path) -> None:
    out = await handler({"name": "nonexistent_symbol"}, ctx_for(project))
    assert out.ok
    assert out.content.startswith("No definition matching 'nonexistent_symbol'")
    assert out.metadata["matches"] == 0


def test_query_helpers() -> None:
    assert split_query("Engine.run") == ("run", "Engine")
    assert split_query("a::b::c") == ("c", "a.b")
    assert split_query("M:f") == ("f", "M")
    assert split_query("plain") == ("plain", None)
    assert match_tier("run", "RUN") == 0
    assert match_tier("run", "runner") == 1
    assert match_tier("run", "rerun") == 2
    assert match_tier("run", "walk") is None


def test_spec_shape() -> None:
    assert TOOL.name == "code_symbols"
    assert "function" in TOOL.input_schema["properties"]["kind"]["enum"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `name`"),
        ({"name": 3}, "`name` must be a string"),
        ({"name": "two words"}, "`name` must be an identifier"),
        ({"name": "a(b)"}, "`name` must be an identifier"),
        ({"name": "x", "kind": "lambda"}, "`kind` must be one of function, method, class"),
        ({"name": "x", "max_results": -1}, "`max_results` must be an integer between 1 and 500"),
        ({"name": "x", "path": "src"}, "unknown argument `path`"),
    ],
)
async def test_bad_arguments(project: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        await handler(args, ctx_for(project))
    assert message in caught.value.message
