"""``code_map``: a repository overview — folder tree with file counts, then the
top-level symbols of the files most likely to matter."""

from __future__ import annotations

import asyncio
import math
import os
import re
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Annotated

from pydantic import Field

from smith_tui.tools.args import DEFAULT_CODE_MAX_CHARS, Name, NotBool, max_output_chars
from smith_tui.tools.builtin.code.render import fit_blocks, plural
from smith_tui.tools.builtin.code.rg import list_files
from smith_tui.tools.builtin.code.symbols import Symbol, language_for, symbols_of_file
from smith_tui.tools.files import project_root, resolve_in_project
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolOutput, ToolSpec

NAME = "code_map"
_CHILDREN_SHOWN = 25
_TOP_SYMBOLS_SHOWN = 25
_KEY_STEMS = frozenset(
    "main __main__ app cli core server index lib mod api engine runtime client config "
    "models types init router handlers service".split()
)
_SIDE_PATH = re.compile(
    r"(^|/)(tests?|testing|spec|__tests__|examples?|vendor|third_party|docs?|bench(marks?)?|"
    r"fixtures|migrations|build|dist)(/|$)|(^|/)test_[^/]*$|_test\.\w+$"
)


def _tree(files: list[str], base: str, depth: int) -> list[str]:
    """Indented folder rows (recursive file counts) and the files directly in ``base``."""
    prefix = "" if base == "." else base.rstrip("/") + "/"
    counts: Counter[str] = Counter()
    top_files: list[str] = []
    for path in files:
        rel = path[len(prefix) :] if prefix and path.startswith(prefix) else path
        parts = rel.split("/")
        if len(parts) == 1:
            top_files.append(parts[0])
        for level in range(1, min(len(parts), depth + 1)):
            counts["/".join(parts[:level])] += 1
    children: dict[str, list[str]] = {}
    for folder in counts:
        parent = folder.rpartition("/")[0]
        children.setdefault(parent, []).append(folder)
    rows = [f"{base}/ ({plural(len(files), 'file')})"]

    def walk(folder: str, level: int) -> None:
        kids = sorted(children.get(folder, []))
        for kid in kids[:_CHILDREN_SHOWN]:
            rows.append(f"{'  ' * level}{kid.rpartition('/')[2]}/ ({plural(counts[kid], 'file')})")
            walk(kid, level + 1)
        if len(kids) > _CHILDREN_SHOWN:
            rows.append(f"{'  ' * level}[… {len(kids) - _CHILDREN_SHOWN} more folders]")

    walk("", 1)
    for name in sorted(top_files)[:_CHILDREN_SHOWN]:
        rows.append(f"  {name}")
    if len(top_files) > _CHILDREN_SHOWN:
        rows.append(f"  [… {len(top_files) - _CHILDREN_SHOWN} more files]")
    return rows


def _prior(path: str, base: str, root: Path) -> float:
    """How likely a file is to matter, before reading it."""
    rel = path if base == "." else path[len(base) + 1 :]
    pure = PurePosixPath(rel)
    score = -1.0 * (len(pure.parts) - 1)
    stem = pure.name.split(".", 1)[0].lower()
    if stem in _KEY_STEMS:
        score += 3.0
    if _SIDE_PATH.search(path):
        score -= 4.0
    try:
        size = os.stat(root / path).st_size
    except OSError:
        return score
    return score + min(5.0, math.log2(size / 1024 + 1))


def _relevant(
    root: Path, files: list[str], base: str, how_many: int
) -> list[tuple[str, list[Symbol]]]:
    """The ``how_many`` most relevant source files with their symbols."""
    sources = [p for p in files if language_for(p) is not None]
    sources.sort(key=lambda p: (-_prior(p, base, root), p))
    scored = []
    for path in sources[: how_many * 4]:
        symbols = symbols_of_file(root / path)
        if not symbols:
            continue
        top = sum(1 for s in symbols if s.depth == 0)
        scored.append((_prior(path, base, root) + min(top, 30) / 6, path, symbols))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(path, symbols) for _, path, symbols in scored[:how_many]]


def _symbol_block(path: str, symbols: list[Symbol]) -> str:
    members: Counter[str] = Counter(s.parent for s in symbols if s.depth == 1 and s.parent)
    top = [s for s in symbols if s.depth == 0 and not s.name.startswith(("_", "#"))]
    private = sum(1 for s in symbols if s.depth == 0) - len(top)
    rows = [path + (f" (+{plural(private, 'private top-level name')})" if private else "")]
    for symbol in top[:_TOP_SYMBOLS_SHOWN]:
        count = members[symbol.qualified]
        extra = f" (+{plural(count, 'member')})" if count else ""
        rows.append(f"  {symbol.line:>5}  {symbol.kind} {symbol.name}{extra}")
    if len(top) > _TOP_SYMBOLS_SHOWN:
        rows.append(f"  [… {len(top) - _TOP_SYMBOLS_SHOWN} more; code_outline shows all]")
    return "\n".join(rows)


class Args(ToolArgs):
    """Arguments of ``code_map``."""

    path: Annotated[Name, Field(max_length=1000)] | None = Field(
        None, description="Folder to map, relative to the project root (default: all)."
    )
    depth: Annotated[int, Field(ge=1, le=6), NotBool] = Field(
        2, description="Folder levels to show (default 2)."
    )
    max_files: Annotated[int, Field(ge=0, le=50), NotBool] = Field(
        12,
        description=(
            "How many relevant files to list symbols for (default 12; 0 for the tree only)."
        ),
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Summarise the repository (or one folder of it)."""
    root = project_root(ctx)
    _, rel = resolve_in_project(NAME, root, args.path, want="dir")
    depth, how_many = args.depth, args.max_files
    files = await list_files(root, rel, ctx.cancel)
    where = "the project" if rel == "." else rel
    if not files:
        return ToolOutput(
            f"No files under {where} (hidden and ignored files are not listed).",
            metadata={"files": 0},
        )
    budget = max_output_chars(ctx, NAME, DEFAULT_CODE_MAX_CHARS)
    tree_text, _ = fit_blocks(
        f"Folders of {where} to depth {depth} (file counts include subfolders):",
        _tree(files, rel, depth),
        int(budget * 0.45),
        unit="rows",
        hint="pass 'path' to map one folder",
    )
    relevant = await asyncio.to_thread(_relevant, root, files, rel, how_many) if how_many else []
    blocks = [_symbol_block(path, symbols) for path, symbols in relevant]
    if not blocks:
        return ToolOutput(tree_text, metadata={"files": len(files), "files_with_symbols": 0})
    symbols_text, shown = fit_blocks(
        f"\nTop-level symbols of the {len(blocks)} most relevant source files (line, kind, name):",
        blocks,
        budget - len(tree_text) - 1,
        unit="files",
        hint="use code_outline on a file",
    )
    return ToolOutput(
        tree_text + "\n" + symbols_text,
        metadata={"files": len(files), "files_with_symbols": shown},
    )


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Overview of the repository (or of one folder): the folder tree to a given depth "
        "with the number of files in each folder, then the top-level symbols (classes, "
        "functions, types, …, with line numbers) of the most relevant source files — entry "
        "points and substantial files near the top, tests and vendored code last. Honours "
        ".gitignore; hidden files and .git are left out. Start here in an unfamiliar "
        "project."
    ),
    args=Args,
    handler=handler,
)
