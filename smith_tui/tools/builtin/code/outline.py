"""``code_outline``: one file's symbols with line numbers, nested."""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import Field

from smith_tui.tools.args import DEFAULT_CODE_MAX_CHARS, Name, max_output_chars
from smith_tui.tools.builtin.code.render import fit_blocks, plural
from smith_tui.tools.builtin.code.symbols import (
    LANGUAGE_BY_SUFFIX,
    MAX_FILE_BYTES,
    Symbol,
    extract_symbols,
    language_for,
    read_source,
)
from smith_tui.tools.files import project_root, resolve_in_project
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

NAME = "code_outline"


def format_symbol(symbol: Symbol) -> str:
    """One outline row: line number, indentation by depth, the definition line, the kind."""
    return f"{symbol.line:>6}  {'  ' * symbol.depth}{symbol.signature}  ({symbol.kind})"


class Args(ToolArgs):
    """Arguments of ``code_outline``."""

    path: Annotated[Name, Field(max_length=1000)] = Field(
        description="The file, relative to the project root (e.g. 'src/app.py')."
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Outline the symbols of one source file."""
    root = project_root(ctx)
    full, rel = resolve_in_project(NAME, root, args.path, want="file")
    language = language_for(full)
    if language is None:
        suffixes = " ".join(sorted(LANGUAGE_BY_SUFFIX))
        raise ToolError(
            f"{NAME}: no symbol outline for {rel!r} (suffix {full.suffix or 'none'!r}); "
            f"supported suffixes: {suffixes}. Use the read tool to view other files.",
            code="unsupported_language",
        )
    text = await asyncio.to_thread(read_source, full)
    if text is None:
        raise ToolError(
            f"{NAME}: {rel!r} is binary, unreadable or larger than {MAX_FILE_BYTES} bytes",
            code="unreadable_file",
        )
    symbols = await asyncio.to_thread(extract_symbols, text, language)
    line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    header = f"{rel} ({language}, {plural(line_count, 'line')}, {plural(len(symbols), 'symbol')})"
    if not symbols:
        return ToolOutput(
            header + "\nNo definitions found.",
            metadata={"path": rel, "language": language, "symbols": 0},
        )
    rows = [format_symbol(symbol) for symbol in symbols]
    content, shown = fit_blocks(
        header,
        rows,
        max_output_chars(ctx, NAME, DEFAULT_CODE_MAX_CHARS),
        unit="symbols",
        hint="read the file in parts",
    )
    return ToolOutput(
        content,
        metadata={"path": rel, "language": language, "symbols": len(symbols), "shown": shown},
    )


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Outline one source file: its classes, functions, methods, types and top-level "
        "constants with line numbers, nested members indented under their class/impl. "
        "Heuristic and fast; supports Python, Lua, C/C++, JavaScript/TypeScript, Go and "
        "Rust. Use it before reading a large file to jump to the right lines."
    ),
    args=Args,
    handler=handler,
)
