"""Going back: ``/undo``, ``/fork``, ``/rewind`` (the checkpoints of the project's files)."""

from __future__ import annotations

import asyncio

from smith_tui.engine import checkpoints as cp
from smith_tui.engine.slash.command_host import CommandHost
from smith_tui.engine.slash.command_table import CommandContext, CommandError, CommandGroup, Reply
from smith_tui.tools.checkpoints.shadow_repo import Checkpoints

commands = CommandGroup()


def checkpoints_of(runtime: CommandHost) -> Checkpoints:
    """The project's checkpoints; refused while a turn runs (it may be changing files)."""
    if getattr(runtime, "busy", False):
        raise CommandError("a turn is running; wait for it or cancel it (ctrl+c) first")
    return cp.runtime_checkpoints(runtime)


@commands.command("/undo", help="restore the files to before the last turn that changed them")
async def undo_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Undo the last turn's file changes (and say what a checkpoint cannot bring back)."""
    if args:
        raise undo_command.misuse(" (no arguments; /rewind ID picks a checkpoint)")
    result = await asyncio.to_thread(cp.undo, checkpoints_of(ctx.runtime))
    text, data = cp.undone_text(result, cp.TurnLabels(ctx.runtime.store))
    if result is None:
        return text, data
    from smith_tui.engine.undo_limits import beyond_text, beyond_undo

    item = result.checkpoint
    found = beyond_undo(
        ctx.runtime.store,
        item.conversation_id,
        item.turn_id,
        ctx.runtime.config.model.sandbox,
    )
    if found:
        text = f"{text}\n{beyond_text(found)}"
        data = {**data, "beyond_undo": [[b.what, b.why] for b in found]}
    return text, data


@commands.command(
    "/fork",
    "[N] [--files]",
    help="copy the conversation up to turn N (and the files)",
    editor="switch",
)
async def fork_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Copy the conversation (up to turn ``N``; ``--files``: the files as they were then)."""
    usage = fork_command.usage_line(" (N: a turn number, as /rewind names turns)")
    from smith_tui.engine import forks

    files = "--files" in args
    rest = [a for a in args if a != "--files"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        raise CommandError(usage)
    runtime = ctx.runtime
    source = runtime.conversations.conversation_id
    if not source:
        raise CommandError("nothing to fork yet: this conversation has no messages")
    turns = forks.turn_ids(runtime.store, source)
    through: str | None = None
    if rest:
        if not rest[0].isdigit() or not 1 <= int(rest[0]) <= len(turns):
            raise CommandError(f"{usage}; this conversation has turns 1 to {len(turns)}")
        through = turns[int(rest[0]) - 1]
    try:
        fork = forks.fork_conversation(runtime.store, source, through_turn=through)
    except forks.ForkError as exc:
        raise CommandError(str(exc)) from None
    restored = ""
    if files and through is not None:
        result = await asyncio.to_thread(
            forks.restore_files_for, checkpoints_of(runtime), source, through, turns
        )
        restored = (
            " " + cp.restored_text(result, cp.TurnLabels(runtime.store))
            if result is not None
            else " The files already are as they were then."
        )
    runtime.conversations.load(fork)
    count = len(runtime.conversations.messages)
    upto = f"up to turn {rest[0]}" if rest else "whole"
    text = f"forked {upto} into conversation {fork} ({count} messages); now in the fork."
    return text + restored, {"conversation_id": fork, "forked_from": source}


@commands.command("/rewind", "[ID [--conversation]]", help="list checkpoints or restore one")
async def rewind_command(ctx: CommandContext, args: list[str]) -> Reply:
    """The checkpoints, or restore ``ID`` (``--conversation``: cut the conversation there)."""
    checkpoints = checkpoints_of(ctx.runtime)
    if not args:
        entries = await asyncio.to_thread(cp.rewind_entries, checkpoints)
        cp.label_entries(entries, cp.TurnLabels(ctx.runtime.store))
        return cp.rewind_text(entries), {"action": "rewind", "checkpoints": entries}
    flags = [a for a in args[1:] if a.startswith("-")]
    if len(args) > 2 or any(f != "--conversation" for f in flags) or len(flags) != len(args) - 1:
        raise rewind_command.misuse()
    result, item = await asyncio.to_thread(cp.rewind, checkpoints, args[0])
    text = cp.restored_text(result, cp.TurnLabels(ctx.runtime.store))
    data = cp.restored_data(result)
    if flags:
        conv = ctx.runtime.conversations.conversation_id
        if item.turn_id is None or item.conversation_id != conv or conv is None:
            return (
                text + " The conversation was left as it is: the checkpoint is not a turn of it.",
                data,
            )
        removed = cp.truncate_conversation(ctx.runtime.store, conv, item.turn_id)
        ctx.runtime.conversations.reload()
        text += f" The conversation now ends before that turn ({removed} messages removed)."
        data["removed_messages"] = removed
    return text, data
