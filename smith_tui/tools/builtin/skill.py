"""The ``skill`` tool: load a skill's instructions, or a file beside them, when the model
decides the skill fits (progressive disclosure: the system prompt holds only each
skill's name and description).

The skills come from the turn's ``ToolServices.skills`` (the engine's discovery); this tool
only reads, with the file rules of ``read``: regular files only (no FIFO, device or
socket), opened beneath the skill's folder following no symlink out of it, at most
``services.tool.read.max_file_bytes`` loaded and ``services.tool.skill.max_output_chars``
shown (``continue with offset`` past that).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from smith_tui.tools.args import Int, Text, max_output_chars
from smith_tui.tools.cancellable import until_cancelled
from smith_tui.tools.files import ToolPath, max_file_bytes, read_text_file
from smith_tui.tools.ports import SkillEntry
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

SKILL_FILE = "SKILL.md"
#: Most files the listing beside a skill's body names.
MAX_LISTED_FILES = 50


class Args(ToolArgs):
    """Arguments of ``skill``."""

    name: Text = Field(description="The skill's name, as the system prompt lists it.")
    file: Text | None = Field(
        None,
        description="A file inside the skill's folder (relative, as the skill names it); "
        "leave out to load the skill's instructions.",
    )
    offset: Int = Field(1, ge=1, description="First line to show, 1-based (default 1).")


def _skill(ctx: ToolContext, name: str) -> SkillEntry:
    source = ctx.services.skills
    skills = list(source.skills) if source is not None else []
    found = next((s for s in skills if s.name == name.strip()), None)
    if found is None:
        known = ", ".join(s.name for s in skills) or "none"
        raise ToolError(f"skill: unknown skill {name!r}; skills: {known}", code="unknown_skill")
    return found


def _target(skill: SkillEntry, file: str) -> ToolPath:
    """``file`` in the skill's folder, refused when it leads outside it."""
    if "\x00" in file or os.path.isabs(file):
        raise ToolError(
            f"skill: `file` {file!r} must be a path relative to the skill's folder",
            code="invalid_arguments",
        )
    root = Path(os.path.realpath(skill.folder))
    shown = Path(os.path.normpath(skill.folder / file))
    real = Path(os.path.realpath(shown))
    if real != root and root not in real.parents:
        raise ToolError(
            f"skill: {file!r} is outside the folder of skill {skill.name!r}; only its own "
            "files are loaded",
            code="outside_skill",
        )
    return ToolPath(shown, real, root, f"{file} of skill {skill.name!r}")


def _files_beside(folder: Path) -> list[str]:
    """The files in a skill's folder (SKILL.md left out), relative, without following links."""
    found: list[str] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(top, name), folder)
            if rel != SKILL_FILE:
                found.append(rel)
            if len(found) > MAX_LISTED_FILES:
                return found
    return found


def _window(text: str, offset: int, budget: int) -> tuple[str, int, int]:
    """Lines from ``offset`` within ``budget`` characters: the text, the last line, the total."""
    lines = text.splitlines()
    total = len(lines)
    if offset > max(total, 1):
        raise ToolError(f"skill: offset {offset} is past the end ({total} lines)", code="bad_range")
    taken: list[str] = []
    used = 0
    for line in lines[offset - 1 :]:
        if taken and used + len(line) + 1 > budget:
            break
        taken.append(line)
        used += len(line) + 1
    return "\n".join(taken), offset - 1 + len(taken), total


def _load(args: Args, ctx: ToolContext) -> ToolOutput:
    from smith_tui.config.front_matter import body_of

    skill = _skill(ctx, args.name)
    file = args.file.strip() if args.file else ""
    target = _target(skill, file or SKILL_FILE)
    read = read_text_file(
        target, ctx, tool="skill", limit=max_file_bytes(ctx, "read"), allow_cut=True
    )
    text = read.text
    if not file:
        text = body_of(text)  # the front matter is the system prompt's already
    body, last, total = _window(text.strip("\n"), args.offset, max_output_chars(ctx, "skill"))
    what = f"file {file}" if file else "instructions"
    parts = [f"[skill {skill.name}: {what}, lines {args.offset}-{last} of {total}]", body]
    if last < total:
        parts.append(f"[{total - last} more lines; continue with offset={last + 1}]")
    elif read.cut:
        parts.append(f"[the file is {read.size:,} bytes; only the first part was read]")
    if not file and args.offset == 1:
        beside = _files_beside(skill.folder)
        if beside:
            shown = beside[:MAX_LISTED_FILES]
            more = " …" if len(beside) > MAX_LISTED_FILES else ""
            parts.append(
                f'[files beside it, loaded with skill(name="{skill.name}", file=...): '
                + ", ".join(shown)
                + more
                + "]"
            )
    return ToolOutput(
        content="\n".join(parts),
        metadata={"skill": skill.name, "file": file or None, "end_line": last, "total": total},
    )


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Load a skill (file I/O off the event loop; a cancel returns at once)."""

    return await until_cancelled(ctx, asyncio.to_thread(_load, args, ctx))


TOOL = ToolSpec(
    name="skill",
    description=(
        "Load a skill listed under 'Skills' in the system prompt: its instructions (name "
        "only), or a file inside its folder that the instructions name (name and file). "
        "Load a skill when the task matches its description, before you start, and follow "
        "it. Long outputs stop at a character budget and say which offset to continue from."
    ),
    args=Args,
    handler=handler,
)
