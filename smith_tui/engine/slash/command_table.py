"""How a slash command is declared: name, arguments, help, usage and handler in one place.

Each command module holds a :class:`CommandGroup`; ``@group.command(...)`` on a handler
makes the :class:`SlashCommand` (the decorated name is that command, so a handler quotes
its own usage as ``load.misuse()``). The package puts the groups together in the order
``/help`` lists them; the help text, the completion list, the editor's ``/`` menu and the
refusals of commands used wrongly are all read off these declarations.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from smith_tui.engine.command_files import CommandFile
from smith_tui.engine.slash.command_host import CommandHost
from smith_tui.errors import SmithError

Reply = tuple[str, dict[str, Any]]
"""What a handler returns: the text shown, and data for front ends (an ``action``...)."""

EditorLimit = Literal["screen", "switch"]
"""Why a command does not work in an editor (``smith acp``): ``screen`` needs the TUI itself
(a viewer, the clipboard, its process); ``switch`` moves the front end to another
conversation, which an editor's session cannot follow (its session id stays the
conversation's)."""


class CommandError(SmithError):
    """A command used wrongly; the message says how to use it."""

    code = "command"


class CommandContext(Protocol):
    """What a handler gets besides its arguments: the runtime, and the service's lists."""

    @property
    def runtime(self) -> CommandHost: ...
    @property
    def table(self) -> CommandTable: ...

    def about(self, name: str) -> str: ...
    def file_commands(self, *, fresh: bool = False) -> dict[str, CommandFile]: ...
    def server_prompts(self) -> dict[str, tuple[str, Any]]: ...


Handler = Callable[[CommandContext, list[str]], Awaitable[Reply]]


@dataclass(frozen=True)
class SlashCommand:
    """One built-in command as declared next to its handler."""

    name: str
    """``/load``."""
    args: str
    """Its arguments as ``/help``, completion and an editor's input hint show them
    (``ID``, ``[PATH]``); empty for a command without any."""
    help: str
    """What it does, in a few words."""
    handler: Handler
    usage: str
    """The usage its refusals quote (``name args`` unless declared otherwise)."""
    aliases: tuple[str, ...] = ()
    editor: EditorLimit | None = None
    """Why it does not work in an editor; ``None``: it works in every front end."""

    @property
    def listing(self) -> str:
        """Its line in ``/help`` (after the name): ``/load ID — open a conversation``."""
        return f"{self.name} {self.args} — {self.help}" if self.args else self.help

    def usage_line(self, detail: str = "") -> str:
        """``usage: /load ID`` and ``detail`` after it."""
        return f"usage: {self.usage}{detail}"

    def misuse(self, detail: str = "") -> CommandError:
        """The error to raise when the command is used wrongly (:meth:`usage_line`)."""
        return CommandError(self.usage_line(detail))

    def problems(self) -> list[str]:
        """What is wrong with this declaration (empty: nothing): :class:`CommandTable`
        refuses a command with any, so a command without help or with a usage that lost
        one of its arguments never loads."""
        name, found = self.name, []
        if not re.fullmatch(r"/[a-z][a-z0-9_-]*", name):
            found.append(f"{name}: a command's name is / and one lower-case word")
        if not self.help.strip() or self.help != self.help.strip():
            found.append(f"{name}: no help")
        if " — " in self.help:
            found.append(f"{name}: ' — ' in the help (it separates the usage from the help)")
        if not self.usage.startswith(name):
            found.append(f"{name}: a usage that does not start with the name")
        missing = _words(self.args) - _words(self.usage)
        if missing:
            found.append(f"{name}: the usage lacks {sorted(missing)} of its arguments")
        if not inspect.iscoroutinefunction(self.handler):
            found.append(f"{name}: the handler is not async")
        return found


def _words(synopsis: str) -> set[str]:
    """The words of an argument synopsis, lower case: ``[open N|user]`` → open, n, user."""
    return {word.lower() for word in re.findall(r"[\w-]+", synopsis)}


class CommandGroup:
    """The commands of one module, in the order they are declared."""

    def __init__(self) -> None:
        self.commands: list[SlashCommand] = []

    def command(
        self,
        name: str,
        args: str = "",
        *,
        help: str,
        usage: str | None = None,
        aliases: Sequence[str] = (),
        editor: EditorLimit | None = None,
    ) -> Callable[[Handler], SlashCommand]:
        """Declare the decorated handler as command ``name`` (see :class:`SlashCommand`)."""

        def declare(handler: Handler) -> SlashCommand:
            command = SlashCommand(
                name=name,
                args=args,
                help=help,
                handler=handler,
                usage=usage or f"{name} {args}".rstrip(),
                aliases=tuple(aliases),
                editor=editor,
            )
            self.commands.append(command)
            return command

        return declare


class CommandTable:
    """Every built-in command, in ``/help``'s order, found by name or alias.

    Raises ``ValueError`` for a name declared twice and for any of
    :meth:`SlashCommand.problems`.
    """

    def __init__(self, *groups: CommandGroup) -> None:
        self.commands: dict[str, SlashCommand] = {}
        self.aliases: dict[str, str] = {}
        for group in groups:
            for command in group.commands:
                if command.problems():
                    raise ValueError("; ".join(command.problems()))
                if command.name in self.commands or command.name in self.aliases:
                    raise ValueError(f"{command.name} is declared twice")
                self.commands[command.name] = command
                for alias in command.aliases:
                    if alias in self.commands or alias in self.aliases:
                        raise ValueError(f"{alias} is declared twice")
                    self.aliases[alias] = command.name

    def __iter__(self) -> Iterator[SlashCommand]:
        return iter(self.commands.values())

    def find(self, name: str) -> SlashCommand | None:
        """The command ``name`` (``/``-prefixed, an alias too) runs, else ``None``."""
        return self.commands.get(self.aliases.get(name, name))

    def names(self) -> list[str]:
        """The commands' names, then the aliases."""
        return [*self.commands, *self.aliases]

    def by_name(self) -> dict[str, SlashCommand]:
        """Every name and alias → the command it runs."""
        return {name: self.commands[self.aliases.get(name, name)] for name in self.names()}

    def listing(self) -> dict[str, str]:
        """Name → its line in ``/help`` (see :attr:`SlashCommand.listing`)."""
        return {command.name: command.listing for command in self}

    def not_in_editor(self) -> dict[str, EditorLimit]:
        """Name → why it does not work in an editor, for the commands that do not."""
        return {c.name: c.editor for c in self if c.editor is not None}
