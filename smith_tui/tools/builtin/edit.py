"""The ``edit`` tool: a hash-guarded line-range edit (replace, insert or delete)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from smith_tui.tools.args import Int, NotBool, Text, max_output_chars
from smith_tui.tools.diffs import display_path, range_diff
from smith_tui.tools.files import (
    NotRegularFileError,
    TextLines,
    ToolPath,
    is_sha256_hex,
    max_file_bytes,
    not_regular_error,
    number_lines,
    read_text_file,
    resolve_for_tool,
    sha256_hex,
    write_file,
)
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

OPERATIONS = ("replace", "insert", "delete")
CONTEXT_LINES = 3


def _operation(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _digest(value: str) -> str:
    digest = value.strip().lower()
    if not is_sha256_hex(digest):
        raise ValueError(
            f"must be the 64-character SHA-256 hex digest that `read` reported, got {value!r:.80}"
        )
    return digest


class Args(ToolArgs):
    """Arguments of ``edit``; the operation decides which of end_line/text apply."""

    path: Text = Field(
        description="File to edit; relative paths resolve against the working directory."
    )
    expected_hash: Annotated[str, AfterValidator(_digest)] = Field(
        description="SHA-256 hex of the file as last seen (from `read` or a previous edit)."
    )
    operation: Annotated[Literal["replace", "insert", "delete"], BeforeValidator(_operation)] = (
        Field(description="replace, insert or delete.")
    )
    start_line: Int = Field(
        ge=1,
        description="First line of the range (1-based); for insert, the line to insert before.",
    )
    end_line: Annotated[int, Field(ge=1), NotBool] | None = Field(
        None,
        description=(
            "Last line of the range, inclusive (replace/delete; default start_line). "
            "Not used by insert."
        ),
    )
    text: str | None = Field(
        None,
        description=(
            "New lines for replace/insert, without line numbers. A single trailing "
            "newline is optional; an empty string with replace removes the range."
        ),
    )

    @model_validator(mode="after")
    def _fits_operation(self) -> Args:
        if self.operation == "insert":
            if self.end_line is not None:
                raise ValueError(
                    "`end_line` is not used by insert (text goes before `start_line`); omit it, "
                    "or use operation=replace to overwrite a range"
                )
            if not self.text:
                raise ValueError(
                    'insert needs a non-empty `text`; use "\\n" to insert one empty line'
                )
        if self.operation == "replace" and self.text is None:
            raise ValueError("replace needs `text` (use operation=delete to remove lines)")
        if self.operation == "delete" and self.text:
            raise ValueError(
                "delete takes no `text`; use operation=replace to put new text in the range"
            )
        return self


@dataclass
class EditRequest:
    """The arguments of one edit call with the path resolved."""

    target: ToolPath
    expected_hash: str
    operation: str
    start: int
    end: int | None
    text: str | None


def _parse(args: Args, ctx: ToolContext) -> EditRequest:
    target = resolve_for_tool(args.path, ctx, tool="edit", writing=True)
    return EditRequest(
        target, args.expected_hash, args.operation, args.start_line, args.end_line, args.text
    )


def _new_lines(text: str, crlf: bool) -> list[str]:
    """Split inserted text into lines in the file's line-ending style.

    One trailing newline is a line terminator, not an extra empty line.
    """
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    if normalised.endswith("\n"):
        normalised = normalised[:-1]
    elif normalised == "":
        return []
    lines = normalised.split("\n")
    return [line + "\r" for line in lines] if crlf else lines


def _check_range(req: EditRequest, total: int, where: str) -> int:
    """Validate the line range against the file; return the inclusive end line."""
    if req.operation == "insert":
        if req.start > total + 1:
            raise ToolError(
                f"start_line {req.start} is out of range for insert into {where}: the file has "
                f"{total} lines, so start_line must be 1-{total + 1} ({total + 1} appends).",
                code="bad_range",
            )
        return req.start - 1
    if total == 0:
        raise ToolError(
            f"{where} is empty, so there are no lines to {req.operation}; "
            f"use operation=insert with start_line=1.",
            code="bad_range",
        )
    end = req.end if req.end is not None else req.start
    if req.start > total:
        raise ToolError(
            f"start_line {req.start} is past the end of {where}: the file has {total} lines.",
            code="bad_range",
        )
    if end < req.start:
        raise ToolError(
            f"end_line {end} is before start_line {req.start}; the range is inclusive, "
            f"so end_line must be >= start_line.",
            code="bad_range",
        )
    if end > total:
        raise ToolError(
            f"end_line {end} is past the end of {where}: the file has {total} lines.",
            code="bad_range",
        )
    return end


def _edit(args: Args, ctx: ToolContext) -> ToolOutput:
    req = _parse(args, ctx)
    where = req.target.where
    current, text = _read_current(req, ctx)
    doc = TextLines.parse(text)
    total = len(doc.lines)
    end = _check_range(req, total, where)
    crlf = doc.uses_crlf
    new = _new_lines(req.text or "", crlf)
    start_index = req.start - 1
    removed = end - start_index
    if total == 0:
        doc.final_newline = True
    shown_diff = range_diff(display_path(req.target), doc.lines, start_index, removed, new)
    doc.lines[start_index:end] = new
    delta = len(new) - removed
    out_bytes = doc.render().encode("utf-8")
    ctx.cancel.check()  # a cancel that came while reading leaves the file untouched
    _write(req, out_bytes, ctx)
    new_hash = sha256_hex(out_bytes)

    new_total = len(doc.lines)
    if new:
        affected = (req.start, req.start + len(new) - 1)
    else:
        affected = (req.start, req.start - 1)
    lo = max(1, req.start - CONTEXT_LINES)
    hi = min(new_total, max(affected[1], req.start) + CONTEXT_LINES)
    snippet = number_lines(doc.lines[lo - 1 : hi], lo) if new_total else "(file is now empty)"
    what, now = _summary(req, end, removed, len(new), affected)
    header = (
        f"Edited {req.target.shown}: {what}; {now}; line delta {delta:+d}; {new_total} lines now.\n"
        f"new hash: {new_hash}\n"
        f"context (lines {lo}-{hi}):\n"
    )
    budget = max_output_chars(ctx, "edit")
    content = header + budget_text(snippet, max(budget - len(header), 200))
    return ToolOutput(
        content=content,
        metadata={
            "path": str(req.target.shown),
            "operation": req.operation,
            "old_hash": current,
            "new_hash": new_hash,
            "affected_start": affected[0],
            "affected_end": affected[1],
            "removed_lines": removed,
            "inserted_lines": len(new),
            "line_delta": delta,
            "total_lines": new_total,
            "line_ending": "crlf" if crlf else "lf",
            **shown_diff.metadata(),
        },
        mutation_state="attempted",
    )


def _read_current(req: EditRequest, ctx: ToolContext) -> tuple[str, str]:
    """The file's current hash and text, refused when it changed since the model read it
    or is not UTF-8."""
    where = req.target.where
    limit = max_file_bytes(ctx, "edit")
    data = read_text_file(req.target, ctx, tool="edit", limit=limit).data
    current = sha256_hex(data)
    if current != req.expected_hash:
        raise ToolError(
            f"{where} changed since you read it: expected_hash {req.expected_hash} but the file "
            f"now hashes to {current}. Nothing was written. Read the file again and redo the "
            f"edit against its current lines and hash.",
            code="stale_hash",
            data={"current_hash": current},
        )
    try:
        return current, data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{where} is not valid UTF-8 (byte {exc.start}); editing it line by line could "
            f"corrupt it. Use bash (e.g. sed) or rewrite it with `write`.",
            code="not_utf8",
        ) from None


def _write(req: EditRequest, data: bytes, ctx: ToolContext) -> None:
    """Write the edited file; a special file or an OS error is a clear tool error."""
    where = req.target.where
    try:
        write_file(req.target, data, ctx, tool="edit")
    except NotRegularFileError as exc:
        raise not_regular_error(where, exc.kind, "edit", writing=True) from None
    except OSError as exc:
        raise ToolError(
            f"could not write {where}: {exc.strerror or exc}.", code="os_error"
        ) from None


def _summary(
    req: EditRequest, end: int, removed: int, inserted: int, affected: tuple[int, int]
) -> tuple[str, str]:
    """What the edit did and where the new text is now, in words."""
    if req.operation == "replace":
        what = f"replaced lines {req.start}-{end} ({removed}) with {inserted} line(s)"
    elif req.operation == "insert":
        what = f"inserted {inserted} line(s) before line {req.start}"
    else:
        what = f"deleted lines {req.start}-{end} ({removed})"
    if inserted:
        now = f"new text is at lines {affected[0]}-{affected[1]}"
    else:
        now = f"the lines after the deletion now start at line {req.start}"
    return what, now


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Apply one line-range edit (file I/O runs off the event loop)."""
    return await asyncio.to_thread(_edit, args, ctx)


TOOL = ToolSpec(
    name="edit",
    description=(
        "Edit a text file by line range, guarded by its hash. First `read` the file, then pass "
        "the sha256 it reported as `expected_hash`; if the file changed since, the edit is "
        "refused and you get the current hash (re-read and retry). Operations: `replace` lines "
        "start_line..end_line (inclusive) with `text`; `insert` `text` before start_line "
        "(start_line = line count + 1 appends); `delete` lines start_line..end_line. Line "
        "numbers are those shown by `read`. The file's line endings (LF/CRLF) and final newline "
        "are kept. Returns the new hash (use it for the next edit of the same file), the "
        "affected range, the line delta and numbered context. After an edit that adds or "
        "removes lines, later line numbers shift by the delta. Works on regular text files "
        "up to 8 MiB inside the project (and configured extra roots), never inside .git."
    ),
    args=Args,
    handler=handler,
    mutating=True,
    changes_files=True,
)
