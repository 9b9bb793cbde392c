"""The ``write`` tool: create or overwrite a whole file atomically."""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from smith_tui.tools.args import Text
from smith_tui.tools.diffs import display_path, text_diff
from smith_tui.tools.files import (
    NotRegularFileError,
    ToolPath,
    not_regular_error,
    open_beneath,
    read_capped,
    refuse_special_target,
    resolve_for_tool,
    sha256_hex,
    write_file,
)
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

#: Files larger than this are overwritten without a diff for the user.
PREVIOUS_TEXT_LIMIT = 2 * 1024 * 1024


class Args(ToolArgs):
    """Arguments of ``write``."""

    path: Text = Field(
        description="File to write; relative paths resolve against the working directory."
    )
    content: str = Field(
        description="The complete new file content (written as UTF-8, exactly as given)."
    )


def _write(args: Args, ctx: ToolContext) -> ToolOutput:
    content = args.content
    target = resolve_for_tool(args.path, ctx, tool="write", writing=True)
    where = target.where
    is_new = not refuse_special_target(target, "write")
    data = content.encode("utf-8")
    previous = _previous_text(target) if not is_new else None
    ctx.cancel.check()
    try:
        write_file(target, data, ctx, tool="write")
    except NotADirectoryError as exc:
        # a folder on the way is a file: the walk names it, relative to the root
        ancestor = target.root / (exc.filename or "")
        raise ToolError(
            f"cannot create {where}: {ancestor} exists and is not a directory.",
            code="bad_path",
        ) from None
    except NotRegularFileError as exc:
        raise not_regular_error(where, exc.kind, "write", writing=True) from None
    except PermissionError:
        raise ToolError(f"permission denied writing {where}.", code="permission_denied") from None
    except OSError as exc:
        raise ToolError(
            f"could not write {where}: {exc.strerror or exc}.", code="os_error"
        ) from None
    digest = sha256_hex(data)
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    verb = "Created" if is_new else "Overwrote"
    shown: dict[str, object] = {}
    if is_new or previous is not None:
        shown = text_diff(display_path(target), previous, content).metadata()
    return ToolOutput(
        content=(
            f"{verb} {target.shown} ({len(data):,} bytes, {lines} lines).\n"
            f"sha256 {digest} (pass this as expected_hash to edit this file)"
        ),
        metadata={
            "path": str(target.shown),
            "sha256": digest,
            "is_new": is_new,
            "size_bytes": len(data),
            "lines": lines,
            **shown,
        },
        mutation_state="attempted",
    )


def _previous_text(target: ToolPath) -> str | None:
    """The text being overwritten (for the diff shown to the user); ``None`` when it is
    too large, not UTF-8 text or cannot be read (beneath the root, a regular file only)."""
    try:
        fd = open_beneath(target, tool="write")
        try:
            if os.fstat(fd).st_size > PREVIOUS_TEXT_LIMIT:
                return None
            return read_capped(fd, PREVIOUS_TEXT_LIMIT + 1).decode("utf-8")
        finally:
            os.close(fd)
    except (OSError, UnicodeDecodeError, ToolError):
        return None


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Write the file (I/O runs off the event loop)."""
    return await asyncio.to_thread(_write, args, ctx)


TOOL = ToolSpec(
    name="write",
    description=(
        "Create a file or replace its whole content, atomically; missing parent directories "
        "are created and an existing file keeps its permissions. Returns the new SHA-256 hash "
        "and whether the file is new. For changing part of an existing file prefer `edit`. "
        "Works inside the project (and configured extra roots), never inside .git, and never "
        "replaces a directory, FIFO, device or socket."
    ),
    args=Args,
    handler=handler,
    mutating=True,
    changes_files=True,
)
