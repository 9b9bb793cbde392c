"""The transcript: ``/inspect``, ``/pager``, ``/copy``, ``/compact``, ``/search``, ``/notes``,
``/export``."""

from __future__ import annotations

import json
from pathlib import Path

from smith_tui.config import data_dir
from smith_tui.config.secrets import redact, secret_values
from smith_tui.engine.compaction import CompactionError
from smith_tui.engine.slash.command_table import CommandContext, CommandError, CommandGroup, Reply
from smith_tui.engine.transcript_text import transcript_text
from smith_tui.terminal_text import visible
from smith_tui.tools.builtin.code.render import plural

commands = CommandGroup()


@commands.command("/inspect", help="inspect and edit persisted messages", editor="screen")
async def inspect_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Open the inspect screen (the text: how many messages are stored)."""
    return f"{len(ctx.runtime.conversations.messages)} persisted messages", {"action": "inspect"}


@commands.command("/pager", help="read the whole transcript", editor="screen")
async def pager_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Open the pager (the text: the transcript as Markdown)."""
    text = transcript_text(ctx.runtime.conversations.messages, markdown=True)
    return text, {"action": "pager"}


@commands.command(
    "/copy",
    "[N]",
    help="copy the last answer, or its Nth code block, to the clipboard",
    editor="screen",
)
async def copy_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The last answer, or its code block ``N``, for the app to put on the clipboard."""
    usage = copy_command.usage_line(" — the last answer, or its Nth code block (1 is the first)")
    answer = next(
        (
            str(m.get("content"))
            for m in reversed(ctx.runtime.conversations.messages)
            if m.get("role") == "assistant" and str(m.get("content") or "").strip()
        ),
        None,
    )
    if answer is None:
        raise CommandError("there is no answer to copy yet")
    if not args:
        return f"the last answer ({len(answer):,} characters)", {
            "action": "copy",
            "text": answer,
        }
    if len(args) > 1 or not args[0].isdigit() or int(args[0]) < 1:
        raise CommandError(usage)
    blocks = code_blocks(answer)
    index = int(args[0])
    if index > len(blocks):
        have = f"only {len(blocks)}" if blocks else "none"
        raise CommandError(f"the last answer has {have} code blocks; {usage}")
    block = blocks[index - 1]
    return f"code block {index} of the last answer ({len(block.splitlines())} lines)", {
        "action": "copy",
        "text": block,
    }


@commands.command(
    "/compact",
    "[FOCUS]",
    help="summarise the older conversation now (FOCUS: what to keep)",
)
async def compact_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Compact the conversation now (not while a turn runs)."""
    if getattr(ctx.runtime, "busy", False):
        raise CommandError("a turn is running; wait for it or cancel it (ctrl+c) first")
    focus = " ".join(args).strip() or None
    try:
        record = await ctx.runtime.compact(focus)
    except CompactionError as exc:
        raise CommandError(f"nothing was compacted: {exc.message}") from None
    text = (
        f"compacted: {plural(record.summarised, 'older message')} summarised, the newest "
        f"{record.kept} kept as they are; context about {record.tokens_before:,} → "
        f"{record.tokens_after:,} tokens. The full history stays in the pager and search."
    )
    return text, {
        "summarised": record.summarised,
        "kept": record.kept,
        "tokens_before": record.tokens_before,
        "tokens_after": record.tokens_after,
    }


@commands.command("/search", "QUERY", help="full-text search; a hit opens the pager at its message")
async def search_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The project's messages matching ``QUERY`` (the app lists them)."""
    if not args:
        raise search_command.misuse()
    hits = ctx.runtime.store.search_messages(" ".join(args), project_id=ctx.runtime.project_id)
    if not hits:
        return "no matches", {"hits": []}
    lines = [f"{h.conversation_id} #{h.position} {h.role}: {h.snippet}" for h in hits]
    # The app lists the hits (action "search"); choosing one opens the pager at it.
    return "\n".join(lines), {
        "hits": [h.__dict__ for h in hits],
        "query": " ".join(args),
        "action": "search",
    }


@commands.command("/notes", help="list project memory notes")
async def notes_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The project's memory notes, one line each."""
    notes = ctx.runtime.store.project_memory.list(ctx.runtime.project_id)
    if not notes:
        return "no project notes yet", {}
    lines = [
        f"{n.note_id}: {(n.content or '').splitlines()[0][:80] if n.content else ''}" for n in notes
    ]
    return "\n".join(lines), {}


@commands.command("/export", "[PATH]", help="save as Markdown or .json (default: the data folder)")
async def export_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Write the conversation to ``PATH`` (Markdown, or JSON for ``.json``), keys redacted."""
    runtime = ctx.runtime
    conv = runtime.conversations.conversation_id or "conversation"
    # Without a path the file goes to the data folder: never into the project unasked.
    target = Path(args[0]) if args else data_dir() / "exports" / f"{conv}.md"
    if not target.is_absolute():
        target = runtime.options.cwd / target
    if target.suffix == ".json":
        text = json.dumps(runtime.conversations.messages, indent=2, default=str)
    else:
        # Read later with cat or a pager: the model's escapes must not act there either.
        # (JSON escapes control characters itself.)
        text = visible(transcript_text(runtime.conversations.messages, markdown=True))
    # A key the user typed or pasted into the conversation must not reach the file.
    text = redact(text, secret_values(runtime.config.model))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from None
    return f"exported {len(runtime.conversations.messages)} messages to {target}", {
        "path": str(target)
    }


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks (``` or ~~~) of ``markdown``, in order, without their fences."""
    blocks: list[str] = []
    fence = ""
    lines: list[str] = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if not fence:
            if stripped.startswith(("```", "~~~")):
                marker = stripped[0]
                fence = marker * (len(stripped) - len(stripped.lstrip(marker)))
                lines = []
        elif stripped.startswith(fence) and not stripped.strip(fence[0]):
            blocks.append("\n".join(lines))
            fence = ""
        else:
            lines.append(line)
    if fence:  # an unclosed fence runs to the end
        blocks.append("\n".join(lines))
    return blocks
