"""``code_symbols``: find where a name is defined, anywhere in the project.

rg first narrows the search to source files that mention the name at all;
only those are read and run through the symbol extractors.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field

from smith_tui.tools.args import DEFAULT_CODE_MAX_CHARS, Name, NotBool, max_output_chars
from smith_tui.tools.builtin.code.render import fit_blocks
from smith_tui.tools.builtin.code.rg import COMMON_FLAGS, find_rg, rg_env, strip_dot
from smith_tui.tools.builtin.code.symbol import SymbolKind
from smith_tui.tools.builtin.code.symbols import LANGUAGE_BY_SUFFIX, Symbol, symbols_of_file
from smith_tui.tools.files import project_root
from smith_tui.tools.process import run_capture
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

NAME = "code_symbols"
MAX_CANDIDATE_FILES = 4000
_TIERS = ("exact", "prefix", "substring")
_SEPARATORS = re.compile(r"::|[.:#]")
_TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__)(/|$)|(^|/)test_[^/]*$|_test\.\w+$")


@dataclass(frozen=True)
class Hit:
    """A symbol that matched the query, with where it lives and how well it matched."""

    path: str
    symbol: Symbol
    tier: int  # index into _TIERS


def split_query(name: str) -> tuple[str, str | None]:
    """Split ``Class.method`` / ``mod::fn`` / ``M:f`` into (name, parent)."""
    parts = [p for p in _SEPARATORS.split(name.strip()) if p]
    if len(parts) <= 1:
        return name.strip(), None
    return parts[-1], ".".join(parts[:-1])


def match_tier(query: str, name: str) -> int | None:
    """0 exact, 1 prefix, 2 substring (all case-insensitive), or ``None``."""
    q, n = query.lower(), name.lower()
    if n == q:
        return 0
    if n.startswith(q):
        return 1
    if q in n:
        return 2
    return None


def _parent_matches(parent_query: str | None, parent: str | None) -> bool:
    if parent_query is None:
        return True
    if parent is None:
        return False
    wanted, actual = parent_query.lower(), parent.lower().replace("::", ".").replace(":", ".")
    return actual == wanted or actual.endswith("." + wanted) or wanted in actual


def find_hits(
    root: Path, paths: list[str], term: str, parent: str | None, kind: str | None
) -> list[Hit]:
    """Extract symbols from ``paths`` and keep those matching the query."""
    hits: list[Hit] = []
    for rel in paths:
        symbols = symbols_of_file(root / rel)
        for symbol in symbols or ():
            if kind is not None and symbol.kind != kind:
                continue
            tier = match_tier(term, symbol.name)
            if tier is None or not _parent_matches(parent, symbol.parent):
                continue
            hits.append(Hit(rel, symbol, tier))
    hits.sort(
        key=lambda h: (
            h.tier,
            h.symbol.name != term,
            bool(_TEST_PATH.search(h.path)),
            h.symbol.depth,
            h.path.count("/"),
            len(h.path),
            h.path,
            h.symbol.line,
        )
    )
    return hits


async def candidate_files(root: Path, term: str, ctx: ToolContext) -> list[str]:
    """Source files (supported languages) that contain ``term``, case-insensitively."""
    globs = [f"--iglob=*{suffix}" for suffix in sorted(LANGUAGE_BY_SUFFIX)]
    argv = [
        find_rg(),
        *COMMON_FLAGS,
        "--files-with-matches",
        "--ignore-case",
        "--fixed-strings",
        *globs,
        "--regexp",
        term,
        "--",
        ".",
    ]
    result = await run_capture(argv, cwd=root, cancel=ctx.cancel, env=rg_env())
    if result.returncode == 2 and not result.stdout:
        message = result.stderr.decode("utf-8", "replace").strip() or "rg failed"
        raise ToolError(f"{NAME}: {message}", code="rg_failed")
    text = result.stdout.decode("utf-8", "surrogateescape")
    return sorted(strip_dot(line) for line in text.splitlines() if line)


def _row(hit: Hit) -> str:
    symbol = hit.symbol
    return f"  {hit.path}:{symbol.line}  {symbol.kind} {symbol.qualified}  — {symbol.signature}"


class Args(ToolArgs):
    """Arguments of ``code_symbols``."""

    name: Annotated[Name, Field(max_length=200)] = Field(
        description="The symbol name, optionally qualified: 'run', 'Engine.run', 'server::start'."
    )
    kind: SymbolKind | None = Field(None, description="Only symbols of this kind.")
    max_results: Annotated[int, Field(ge=1, le=500), NotBool] = Field(
        30, description="Most definitions to return (default 30)."
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Look a symbol up by name across the project."""
    name, kind, limit = args.name, args.kind, args.max_results
    term, parent = split_query(name)
    if not re.fullmatch(r"[\w$~]+", term):
        raise ToolError(
            f"{NAME}: `name` must be an identifier such as 'parse_args', 'Client.send' or "
            f"'mod::run' (got {name!r}); use code_grep for other text",
            code="invalid_arguments",
        )
    root = project_root(ctx)
    candidates = await candidate_files(root, term, ctx)
    capped = len(candidates) > MAX_CANDIDATE_FILES
    hits = await asyncio.to_thread(
        find_hits, root, candidates[:MAX_CANDIDATE_FILES], term, parent, kind
    )
    what = f"{name!r}" + (f" (kind {kind})" if kind else "")
    if not hits:
        return ToolOutput(
            f"No definition matching {what} found in {len(candidates)} source files "
            "that mention it. Try a shorter name, another kind, or code_grep.",
            metadata={"matches": 0, "files_scanned": len(candidates)},
        )
    blocks: list[str] = []
    shown = hits[:limit]
    for tier, label in enumerate(_TIERS):
        rows = [_row(hit) for hit in shown if hit.tier == tier]
        if rows:
            blocks.append(f"{label} matches:\n" + "\n".join(rows))
    header = f"{len(hits)} definitions match {what}"
    if len(hits) > limit:
        header += f" (best {limit} shown: exact, then prefix, then substring matches)"
    if capped:
        header += (
            f"; only the first {MAX_CANDIDATE_FILES} of {len(candidates)} candidate files "
            "were scanned — use a longer name"
        )
    text, _ = fit_blocks(
        header, blocks, max_output_chars(ctx, NAME, DEFAULT_CODE_MAX_CHARS), unit="groups"
    )
    return ToolOutput(
        text,
        metadata={"matches": len(hits), "files_scanned": len(candidates[:MAX_CANDIDATE_FILES])},
    )


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Find where a symbol is defined across the project: functions, methods, classes, "
        "structs, enums, traits, interfaces, types, modules, constants and macros in "
        "Python, Lua, C/C++, JavaScript/TypeScript, Go and Rust. Exact name matches come "
        "first, then names starting with it, then names containing it (case-insensitive). "
        "'Class.method' (or 'mod::fn', 'M:f') restricts to members of that parent. Each hit "
        "shows path:line, kind, qualified name and the definition line."
    ),
    args=Args,
    handler=handler,
)
