"""The ``read`` tool: a numbered line window of a text file plus its content hash."""

from __future__ import annotations

import asyncio
from typing import Any

from smith_tui.tools.args import max_output_chars, optional_int, require_str
from smith_tui.tools.files import (
    TextLines,
    describe_path,
    number_lines,
    read_text_file,
    resolve_path,
    sha256_hex,
)
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolSpec

DEFAULT_LIMIT = 2000


def _render(
    shown_path: str, lines: list[str], first: int, total: int, digest: str, budget: int
) -> tuple[str, int]:
    """Build the output, stopping at whole lines once ``budget`` characters are used.

    Returns the text and the number of the last line included.
    """
    header = f"{shown_path}: {total} lines, sha256 {digest}\n"
    if not lines:
        return header + "(empty file)" if total == 0 else header, first - 1
    body: list[str] = []
    used = len(header) + 80  # room for the window line and a truncation note
    last = first - 1
    for offset, line in enumerate(lines):
        numbered = number_lines([line], first + offset)
        if body and used + len(numbered) + 1 > budget:
            break
        body.append(numbered)
        used += len(numbered) + 1
        last = first + offset
    window = f"lines {first}-{last} of {total}"
    note = ""
    if last < first + len(lines) - 1:
        note = (
            f"\n[output budget of {budget} characters reached after line {last}; "
            f"lines {last + 1}-{first + len(lines) - 1} of the requested window were cut. "
            f"Continue with offset={last + 1}.]"
        )
    elif last < total:
        note = f"\n[{total - last} more lines; continue with offset={last + 1}.]"
    return header + window + "\n" + "\n".join(body) + note, last


def _read(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    raw = require_str(args, "path")
    offset = optional_int(args, "offset", minimum=1) or 1
    limit = optional_int(args, "limit", minimum=1) or DEFAULT_LIMIT
    path = resolve_path(raw, ctx)
    data, text = read_text_file(path, raw, ctx, tool="read")
    digest = sha256_hex(data)
    parsed = TextLines.parse(text)
    total = len(parsed.lines)
    if offset > max(total, 1):
        raise ToolError(
            f"offset {offset} is past the end of {describe_path(raw, path, ctx)}: "
            f"the file has {total} lines. Use an offset between 1 and {max(total, 1)}.",
            code="bad_range",
        )
    window = parsed.lines[offset - 1 : offset - 1 + limit]
    budget = max_output_chars(ctx, "read")
    content, last = _render(str(path), window, offset, total, digest, budget)
    return ToolOutput(
        content=content,
        metadata={
            "path": str(path),
            "sha256": digest,
            "total_lines": total,
            "start_line": offset,
            "end_line": last,
            "size_bytes": len(data),
            "truncated": last < min(total, offset - 1 + limit),
        },
    )


async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Read a window of a text file (runs the file I/O off the event loop)."""
    return await asyncio.to_thread(_read, args, ctx)


TOOL = ToolSpec(
    name="read",
    description=(
        "Read a text file. Returns numbered lines (`<line number>\\t<text>`), the total line "
        "count and the SHA-256 hash of the whole file. Pass that hash as `expected_hash` to "
        "`edit`. Reads the first 2000 lines unless you pass `offset`/`limit`; long outputs "
        "stop at a character budget and tell you which offset to continue from. Binary files "
        "and directories are refused."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to read; relative paths resolve against the working directory.",
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "First line to show, 1-based (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Maximum number of lines to show (default {DEFAULT_LIMIT}).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    handler=handler,
)
