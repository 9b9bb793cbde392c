"""``code_files``: fuzzy file-name search over the files rg would search."""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import Field

from smith_tui.tools.args import DEFAULT_CODE_MAX_CHARS, Name, NotBool, max_output_chars
from smith_tui.tools.builtin.code.fuzzy import prefilter, score_path
from smith_tui.tools.builtin.code.render import fit_blocks
from smith_tui.tools.builtin.code.rg import list_files
from smith_tui.tools.files import project_root
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolOutput, ToolSpec

NAME = "code_files"


def rank_files(query: str, paths: list[str]) -> list[tuple[float, str]]:
    """Paths matching ``query``, best first, with their scores."""
    quick = prefilter(query)
    scored = []
    for path in paths:
        if quick.match(path) is None:
            continue
        score = score_path(query, path)
        if score is not None:
            scored.append((score, path))
    scored.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
    return scored


class Args(ToolArgs):
    """Arguments of ``code_files``."""

    query: Annotated[Name, Field(max_length=200)] = Field(
        description="Part of a file name or path, e.g. 'cli.py', 'toolsgit', 'engine turn'."
    )
    max_results: Annotated[int, Field(ge=1, le=500), NotBool] = Field(
        20, description="Most paths to return (default 20)."
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Find project files whose path fuzzily matches the query."""
    query, limit = args.query, args.max_results
    root = project_root(ctx)
    paths = await list_files(root, ".", ctx.cancel)
    ranked = await asyncio.to_thread(rank_files, query, paths)
    if not ranked:
        return ToolOutput(
            f"No file path matches {query!r} (searched {len(paths)} files; hidden and "
            "ignored files are not listed).",
            metadata={"matches": 0, "files_searched": len(paths)},
        )
    shown = [path for _, path in ranked[:limit]]
    header = f"{len(ranked)} of {len(paths)} files match {query!r}"
    if len(ranked) > limit:
        header += f" (best {limit} shown)"
    text, _ = fit_blocks(
        header, shown, max_output_chars(ctx, NAME, DEFAULT_CODE_MAX_CHARS), unit="paths"
    )
    return ToolOutput(text, metadata={"matches": len(ranked), "files_searched": len(paths)})


TOOL = ToolSpec(
    name=NAME,
    description=(
        "Find files by name with fuzzy matching: the query's characters must appear in "
        "order in the path (e.g. 'tcli' finds 'tests/test_cli.py'). Matches in the file "
        "name rank above matches spread across folders; an exact file name ranks first. "
        "Separate several terms with spaces to require all of them. Lists only files that "
        "are not ignored (.gitignore) or hidden. Paths are relative to the project root."
    ),
    args=Args,
    handler=handler,
)
