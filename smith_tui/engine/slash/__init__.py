"""The built-in slash commands (docs/DESIGN.md §3.6): each declared once, next to its handler.

One module per group (see :mod:`.command_table` for how a command is declared); ``TABLE``
puts them together in the order ``/help`` lists them. Everything that lists or describes
the commands reads ``TABLE`` (``/help``, the help screen, completion, the editor's ``/``
menu); :class:`smith_tui.engine.slash_commands.CommandService` runs them.
"""

from __future__ import annotations

from smith_tui.engine.slash import (
    checkpoint_commands,
    context_commands,
    conversation_commands,
    help_command,
    quit_command,
    setting_commands,
    transcript_commands,
)
from smith_tui.engine.slash.command_table import CommandTable

TABLE = CommandTable(
    help_command.commands,
    conversation_commands.commands,
    setting_commands.commands,
    transcript_commands.commands,
    checkpoint_commands.commands,
    context_commands.commands,
    quit_command.commands,
)
"""Every built-in command, in ``/help``'s order."""

COMMANDS: dict[str, str] = TABLE.listing()
"""Name → its line in ``/help`` (``/load ID — open a conversation``)."""

ALIASES: dict[str, str] = dict(TABLE.aliases)
"""Other names of commands: typing the key runs the value's handler. /help lists them."""

NOT_IN_EDITOR = TABLE.not_in_editor()
"""The commands that do not work outside the TUI (``smith acp``), and why (``screen`` or
``switch``, see :data:`.command_table.EditorLimit`). A command not listed works everywhere."""
