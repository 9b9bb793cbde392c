"""The import graph of smith_tui: no cycle, and the layers only import downwards.

Every module is parsed (not imported), so imports made only for type checking
(``if TYPE_CHECKING:``) and imports inside functions count too: a circle hidden
behind ``TYPE_CHECKING`` or a deferred import is still a circle in the design.
``widgets/`` is installed as ``smith_tui.widgets`` and is walked under that name.

A few root modules import nothing else of ours (``ROOT_MODULES``), so every layer may import
them - ``llm`` included, which otherwise stands alone: the cancellation tokens, the text made
safe for a terminal, and the root of Smith's errors (``smith_tui.errors``: ``SmithError``,
under which the config, store, LLM, tool, command and compaction errors sit).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"smith_tui": ROOT / "smith_tui", "smith_tui.widgets": ROOT / "widgets"}


def _modules() -> dict[str, Path]:
    """Every module of ours by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for prefix, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([prefix, *parts])] = path
    return modules


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The longest module of ours that ``name`` names (``a.b.c`` may be a name in ``a.b``)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path) -> set[str]:
    """The modules of ours that ``module`` imports, anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            resolved = _resolve(target)
            if resolved is not None and resolved != module:
                found.add(resolved)
    return found


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _third_party(path: Path) -> set[str]:
    """Top-level names of every module ``path`` imports (ours and others)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_walk_sees_the_whole_package() -> None:
    # A walk that found nothing would pass every check below.
    assert "smith_tui.engine.runtime" in MODULES
    assert "smith_tui.widgets.transcript" in MODULES
    assert "smith_tui.engine.turn" in GRAPH["smith_tui.engine.runtime"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle() -> None:
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles (TYPE_CHECKING and function-level imports count):\n" + (
        "\n".join(" <-> ".join(c) for c in cycles)
    )


#: Root modules every layer may import (llm included): smith_tui.cancel; smith_tui.terminal_text
#: (outside text made into text a terminal shows rather than obeys), which the widgets, the
#: headless printer and the engine's /export all need; and smith_tui.errors, the root of every
#: error of ours (``SmithError``), which each layer's own errors subclass.
ROOT_MODULES = {"smith_tui.cancel", "smith_tui.errors", "smith_tui.terminal_text"}

#: Each layer and the layers of ours it may import (besides itself and ROOT_MODULES).
LAYERS: dict[str, set[str]] = {
    "app": {"app", "engine", "dispatch", "mcp", "tools", "store", "config", "llm", "widgets"},
    "widgets": {"engine", "config", "llm", "widgets"},
    # smith_tui/acp (smith acp) is a front end like the app's headless printer, without Textual.
    "acp": {"acp", "app", "engine", "dispatch", "mcp", "tools", "store", "config", "llm"},
    "engine": {"engine", "dispatch", "mcp", "tools", "store", "config", "llm"},
    "dispatch": {"engine", "dispatch", "mcp", "tools", "store", "config", "llm"},
    # smith_tui/mcp (the MCP client) sits beside the tools: it makes tools, never runs turns.
    "mcp": {"mcp", "tools", "store", "config", "llm"},
    "tools": {"tools", "store", "config", "llm"},
    "store": {"store", "config"},
    "config": {"config"},
    "llm": {"llm"},
}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


@pytest.mark.parametrize(
    "layer",
    ["app", "widgets", "acp", "engine", "dispatch", "mcp", "tools", "store", "config", "llm"],
)
def test_layers_import_only_downwards(layer: str) -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _layer(module) == layer
        for target in targets
        if target not in ROOT_MODULES and _layer(target) not in LAYERS[layer]
    )
    assert not wrong, "\n".join(wrong)


def test_llm_imports_nothing_of_ours() -> None:
    # Besides the root modules, which import nothing of ours themselves.
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _layer(module) == "llm"
        for target in targets
        if target not in ROOT_MODULES and _layer(target) != "llm"
    )
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("layer", ["engine", "dispatch", "mcp", "tools", "store", "config", "llm"])
def test_below_the_app_nothing_imports_textual(layer: str) -> None:
    wrong = sorted(
        f"{module} imports {name}"
        for module, path in MODULES.items()
        if _layer(module) == layer
        for name in _third_party(path)
        if name.split(".")[0] in ("textual", "rich")
        or name.startswith(("smith_tui.app", "smith_tui.widgets"))
    )
    assert not wrong, "\n".join(wrong)


def test_root_modules_import_nothing_of_ours() -> None:
    # Every layer may import them, so one import of ours here would let a layer reach another.
    wrong = sorted(
        f"{module} imports {target}" for module in ROOT_MODULES for target in GRAPH[module]
    )
    assert not wrong, "\n".join(wrong)
