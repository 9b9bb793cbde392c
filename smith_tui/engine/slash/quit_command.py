"""``/quit``, listed last."""

from __future__ import annotations

from smith_tui.engine.slash.command_table import CommandContext, CommandGroup, Reply

commands = CommandGroup()


@commands.command("/quit", help="quit smith", editor="screen")
async def quit_command(ctx: CommandContext, args: list[str]) -> Reply:
    """Ask the front end to quit (the TUI does; an editor's session cannot)."""
    return "bye", {"action": "quit"}
