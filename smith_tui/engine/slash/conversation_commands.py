"""Moving between conversations: ``/new``, ``/load``, ``/history``, ``/clear``."""

from __future__ import annotations

from typing import Any

from smith_tui.engine.slash.command_table import CommandContext, CommandGroup, Reply

commands = CommandGroup()


@commands.command("/new", help="start a new conversation", editor="switch")
async def new_command(ctx: CommandContext, args: list[str]) -> Reply:
    """A new conversation (its title from the words after ``/new``)."""
    conv = ctx.runtime.conversations.new(" ".join(args) or None)
    return f"new conversation {conv}", {"conversation_id": conv}


@commands.command("/load", "ID", help="open a conversation", editor="switch")
async def load_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Open conversation ``ID``."""
    if len(args) != 1:
        raise load_command.misuse(" (see /history for ids)")
    conv = ctx.runtime.conversations.load(args[0])
    count = len(ctx.runtime.conversations.messages)
    return f"loaded conversation {conv} ({count} messages)", {"conversation_id": conv}


@commands.command("/history", help="list conversations of this project")
async def history_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The project's latest conversations, forks and the active one marked."""
    runtime = ctx.runtime
    convs = runtime.store.conversations.list_for_project(runtime.project_id, limit=50)
    if not convs:
        return "no conversations yet in this project", {"action": "history"}
    from smith_tui.engine.forks import FORKED_FROM

    def line(c: Any) -> str:
        text = f"{c.id}  {c.title or '(untitled)'}"
        source = (c.metadata.get(FORKED_FROM) or {}).get("conversation")
        if source:
            text += f"  (fork of {source})"
        if c.id == runtime.conversations.conversation_id:
            text += "  ← active"
        return text

    lines = [line(c) for c in convs]
    return "\n".join(lines), {"action": "history"}


@commands.command("/clear", help="start over with an empty transcript", editor="switch")
async def clear_command(ctx: CommandContext, args: list[str]) -> Reply:
    """A new, empty conversation."""
    conv = ctx.runtime.conversations.new()
    return "cleared; new conversation " + conv, {"conversation_id": conv}
