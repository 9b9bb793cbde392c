"""Slash commands typed in an editor: which ones run, what the editor's ``/`` menu offers.

One ACP session is one Smith conversation (the session id is the conversation id), so a
command that moves to another conversation (``/new``, ``/clear``, ``/load``) is refused
with the editor's own way to do it, as are the commands that need the TUI's screen
(:data:`smith_tui.engine.slash.NOT_IN_EDITOR` says which). ``/config set active_role``
would write the user's config file for every later session: over ACP it switches this
session's role instead, as ``/role`` and the editor's role selector do.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from acp.helpers import update_available_commands
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from smith_tui.engine import events as ev
from smith_tui.engine.slash import NOT_IN_EDITOR, TABLE

ROLE_PATH = "active_role"
"""The config path of the role turns run as."""

HELP_ABOUT = "the commands that work in this editor"

SWITCH_HINT = (
    "{name} is not available here: in an editor one session is one Smith conversation. "
    "Start a new session in the editor (Zed: New Thread; Toad: a new session) for a fresh "
    "conversation{load}."
)
LOAD_HINT = ", or open an earlier one from the editor's session history (session/load)"
SCREEN_HINT = "{name} needs Smith's terminal screen; it does nothing in an editor."


def command_name(line: str) -> str:
    """``/role`` of ``/role orchestrator`` (lower case)."""
    return line.strip().split(maxsplit=1)[0].lower() if line.strip() else ""


MEMORY_OPEN_HINT = (
    "{name} open starts your $EDITOR from Smith's terminal; here, open the file in the "
    "editor: {name} lists the paths."
)


def refusal(line: str) -> str | None:
    """Why ``line``'s command does not run over ACP (what to do instead), else ``None``."""
    name = command_name(line)
    words = line.split()
    if name in ("/memory", "/context") and len(words) > 1 and words[1] == "open":
        return MEMORY_OPEN_HINT.format(name=name)
    why = NOT_IN_EDITOR.get(name)
    if why == "switch":
        return SWITCH_HINT.format(name=name, load=LOAD_HINT if name == "/load" else "")
    if why == "screen":
        return SCREEN_HINT.format(name=name)
    return None


def role_setting(line: str) -> tuple[str, str | None] | None:
    """``/config set active_role X`` → ``("set", "X")``; ``/config unset active_role`` →
    ``("unset", None)``; ``None`` for any other line."""
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if len(words) < 3 or words[0].lower() != "/config" or words[2] != ROLE_PATH:
        return None
    if words[1] == "set" and len(words) == 4:
        return "set", words[3]
    if words[1] == "unset" and len(words) == 3:
        return "unset", None
    return None


def _split_about(name: str, about: str) -> tuple[str, str]:
    """``/load ID — open a conversation`` → (``ID``, ``open a conversation``)."""
    head, sep, text = about.partition(" — ")
    if sep and (head == name or head.startswith(name + " ")):
        return head[len(name) :].strip(), text.strip()
    return "", about.strip()


def _hint_and_text(service: Any, name: str) -> tuple[str, str]:
    """The input hint and the description of command ``name``: a built-in one's as
    declared, the others' from the service's line about it."""
    command = TABLE.commands.get(name)
    if command is not None:
        return command.args, command.help
    return _split_about(name, service.about(name))


def available(service: Any) -> list[AvailableCommand]:
    """The commands an editor's ``/`` menu offers (blocking: reads the command files):
    the built-in ones that work here, the command files' and the ready MCP servers'
    prompts, each with its input hint."""
    found: list[AvailableCommand] = []
    for name in service.names():
        if name in NOT_IN_EDITOR:
            continue
        hint, text = _hint_and_text(service, name)
        if name == "/help":
            text = HELP_ABOUT
        found.append(
            AvailableCommand(
                name=name.lstrip("/"),
                description=text or name,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
                if hint
                else None,
            )
        )
    return found


def help_text(commands: list[AvailableCommand]) -> str:
    """``/help`` over ACP: the commands that work here (no TUI keys, no TUI-only command)."""
    lines = ["Commands (type them in the prompt):"]
    for command in commands:
        hint = command.input.root.hint if command.input is not None else ""
        head = f"/{command.name} {hint}".rstrip()
        lines.append(f"  {head} — {command.description}")
    lines.append(
        "Modes and the role are also in the editor's selectors; a new session in the "
        "editor starts a new conversation."
    )
    return "\n".join(lines)


ROLE_NOTE = "(this session only: your config file's active_role is unchanged)"
ROLE_UNSET = (
    "over ACP the role is chosen per session (the editor's role selector or /role): the "
    "config file's active_role is left as it is; change it in the TUI or the config file"
)


def _answer(session: Any, line: str, text: str, *, ok: bool = True) -> None:
    """Answer ``line`` with ``text`` as a command's output: shown as the answer, and kept
    with the conversation as every command's output is (a reload shows it)."""
    runtime = session.runtime
    event = ev.CommandOutput(command=command_name(line), text=text, ok=ok, role=runtime.active_role)
    runtime.emit(event)


async def run(session: Any, line: str) -> Any:
    """Run the ``/command`` ``line`` typed in the editor (its output is the answer):
    ``None``, or the turn's result when the command runs as a turn (``/init``, a command
    file, an MCP server's prompt)."""
    runtime = session.runtime
    session.command_running = True
    try:
        refused = refusal(line)
        if refused is not None:
            _answer(session, line, refused, ok=False)
            return None
        if command_name(line) == "/help":
            commands = await asyncio.to_thread(available, runtime.services.command)
            _answer(session, line, help_text(commands))
            return None
        setting = role_setting(line)
        if setting is not None and setting[0] == "unset":
            _answer(session, line, ROLE_UNSET, ok=False)
            return None
        run_line = f"/role {shlex.quote(str(setting[1]))}" if setting is not None else line
        result = await runtime.submit(run_line)
        if setting is not None and getattr(result, "ok", False):
            _answer(session, line, ROLE_NOTE)
    finally:
        session.command_running = False
    return result if hasattr(result, "stop_reason") else None


async def advertise(session: Any) -> None:
    """Send the editor the commands it can offer, when they changed since last sent."""
    commands = await asyncio.to_thread(available, session.runtime.services.command)
    if commands != session.advertised:
        session.advertised = commands
        session.send(update_available_commands(commands))
