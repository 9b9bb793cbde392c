"""The ``read`` tool: a numbered line window of a text file plus its content hash."""

from __future__ import annotations

import asyncio

from pydantic import Field

from smith_tui.tools.args import Int, Text, max_output_chars
from smith_tui.tools.cancellable import until_cancelled
from smith_tui.tools.files import (
    FileText,
    TextLines,
    max_file_bytes,
    number_lines,
    read_text_file,
    resolve_for_tool,
    sha256_hex,
)
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

DEFAULT_LIMIT = 2000


class Args(ToolArgs):
    """Arguments of ``read``."""

    path: Text = Field(
        description="File to read; relative paths resolve against the working directory."
    )
    offset: Int = Field(1, ge=1, description="First line to show, 1-based (default 1).")
    limit: Int = Field(
        DEFAULT_LIMIT,
        ge=1,
        description=f"Maximum number of lines to show (default {DEFAULT_LIMIT}).",
    )


def _header(shown_path: str, total: int, digest: str | None, read: FileText, cap: int) -> str:
    if digest is not None:
        return f"{shown_path}: {total} lines, sha256 {digest}\n"
    return (
        f"{shown_path}: {read.size:,} bytes, only the first {cap:,} read ({total} whole "
        f"lines); no sha256 for a file this big\n"
    )


def _render(
    header: str, lines: list[str], first: int, total: int, budget: int, rest: str
) -> tuple[str, int]:
    """Build the output, stopping at whole lines once ``budget`` characters are used.

    ``rest`` is the note for a file that was cut after line ``total``.
    Returns the text and the number of the last line included.
    """
    if not lines:
        return header + "(empty file)" if total == 0 else header, first - 1
    body: list[str] = []
    used = len(header) + 80 + len(rest)  # room for the window line and the notes
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
    elif rest:
        note = "\n" + rest
    return header + window + "\n" + "\n".join(body) + note, last


def _read(args: Args, ctx: ToolContext) -> ToolOutput:
    offset, limit = args.offset, args.limit
    target = resolve_for_tool(args.path, ctx, tool="read")
    cap = max_file_bytes(ctx, "read")
    read = read_text_file(target, ctx, tool="read", limit=cap, allow_cut=True)
    digest = None if read.cut else sha256_hex(read.data)
    parsed = TextLines.parse(read.text)
    total = len(parsed.lines)
    rest = ""
    if read.cut:
        rest = (
            f"[file cut: it is {read.size:,} bytes and read loads at most {cap:,} "
            f"(services.tool.read.max_file_bytes), so nothing after line {total} is shown. "
            f"Use bash (e.g. `tail`, `sed -n`, `grep -n`) for the rest; edit refuses a file "
            f"this big.]"
        )
    if offset > max(total, 1):
        part = f"the first {cap:,} bytes read hold" if read.cut else "the file has"
        raise ToolError(
            f"offset {offset} is past the end of {target.where}: {part} {total} lines. "
            f"Use an offset between 1 and {max(total, 1)}." + (f" {rest}" if rest else ""),
            code="bad_range",
        )
    window = parsed.lines[offset - 1 : offset - 1 + limit]
    budget = max_output_chars(ctx, "read")
    header = _header(str(target.shown), total, digest, read, cap)
    content, last = _render(header, window, offset, total, budget, rest)
    return ToolOutput(
        content=content,
        metadata={
            "path": str(target.shown),
            "sha256": digest,
            "total_lines": total,
            "start_line": offset,
            "end_line": last,
            "size_bytes": read.size,
            "truncated": last < min(total, offset - 1 + limit),
            "file_cut": read.cut,
        },
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Read a window of a text file.

    The file I/O runs off the event loop; a cancel returns at once and stops
    the reading thread at its next chunk.
    """
    return await until_cancelled(ctx, asyncio.to_thread(_read, args, ctx))


TOOL = ToolSpec(
    name="read",
    description=(
        "Read a text file. Returns numbered lines (`<line number>\\t<text>`), the total line "
        "count and the SHA-256 hash of the whole file. Pass that hash as `expected_hash` to "
        "`edit`. Reads the first 2000 lines unless you pass `offset`/`limit`; long outputs "
        "stop at a character budget and tell you which offset to continue from. Works inside "
        "the project (and configured extra roots) on regular text files; binary files, "
        "directories, FIFOs, devices and sockets are refused. Of a file over 8 MiB only the "
        "first 8 MiB are read (the result says so)."
    ),
    args=Args,
    handler=handler,
)
