"""The commands of the user's setup: ``/memory``, ``/init`` and the command files' turns.

:class:`PreparedTurn` is what a line that becomes a turn turns into (a command file with
its arguments put in, or ``/init``); the command service builds it, the runtime runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from smith_tui.engine.command_files import CommandFile, expand
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.window import tokens_for_chars

#: ``CommandOutput.command`` of the notices about the user's files (a broken command file).
SETUP_NOTICE = "setup"

INIT_PROMPT = """\
Study this repository and write an AGENTS.md at its root for coding agents working in it.

First look around: the README and docs, the build and package files, the test setup, the \
CI configuration, the folder layout and a few representative source files. Then write \
AGENTS.md with the write tool (if one exists already, improve it with edit instead of \
starting over). Keep it short and concrete, only what an agent cannot guess:
- how to install, build, run the tests (a single test too) and run the linters;
- the layout: which folder holds what, and where new code goes;
- the conventions the code follows (style, naming, error handling, tests);
- what must never be done (generated files, secrets, slow or destructive commands).
Do not invent commands: only write ones you found in the repository."""


@dataclass(frozen=True)
class PreparedTurn:
    """A line that runs as a turn: its prompt, and what the command file asks of the turn."""

    prompt: str
    model: str | None = None
    """The model of the turn (a command file's ``model``; ``None``: the usual choice)."""
    tools: frozenset[str] | None = None
    """The only tools offered (a command file's ``allowed-tools``; ``None``: all of them)."""
    command: str = ""


def file_turn(command: CommandFile, arguments: str, models: list[str] | None) -> PreparedTurn:
    """The turn command file ``command`` runs with ``arguments``; its ``model`` is kept only
    when ``models`` (the server's catalog, ``None`` when unknown) lists it."""
    model = command.model
    if model is not None and models and model not in models:
        model = None
    return PreparedTurn(expand(command, arguments), model, command.tool_names(), command.name)


def command_about(command: CommandFile) -> str:
    """``/name HINT — description (project:namespace)``: the line ``/help`` shows."""
    head = f"{command.name} {command.argument_hint}".rstrip()
    text = command.description or "(no description)"
    return f"{head} — {text} ({command.origin})"


def loaded_files(scope: TurnScope) -> list[tuple[str, Path, int, int]]:
    """``(layer, path, bytes shown, estimated tokens)`` of every file in the system prompt,
    in prompt order: the instruction files, then the index file."""
    rows = [(f.layer, f.path, f.shown, f.tokens) for f in scope.instructions]
    if scope.index_content and scope.index_file:
        size = len(scope.index_content.encode("utf-8"))
        path = scope.project_root / scope.index_file
        rows.append(("index", path, size, tokens_for_chars(len(scope.index_content))))
    return rows


def memory_text(scope: TurnScope, user_dir: Path) -> str:
    """What ``/memory`` says: the files loaded, their sizes and token estimates."""
    rows = loaded_files(scope)
    if not rows:
        return (
            "No instruction files are loaded. /init writes an AGENTS.md for this repository; "
            f"your own rules for every project go in {user_dir / 'AGENTS.md'}."
        )
    total = sum(tokens for *_, tokens in rows)
    lines = [f"In the system prompt of every request (about {total:,} tokens):"]
    for number, (layer, path, size, tokens) in enumerate(rows, 1):
        lines.append(f"  {number}. {layer:<10} {path}  {size:,} bytes, ~{tokens:,} tokens")
    for item in scope.instructions:
        if item.cut:
            lines.append(f"  {item.shown_as}: {item.shown:,} of {item.size:,} bytes shown (cut)")
    lines.append("/memory open N opens file N in your editor ($VISUAL or $EDITOR); ")
    lines[-1] += "/memory open user opens your own AGENTS.md."
    return "\n".join(lines)


def memory_target(scope: TurnScope, user_dir: Path, which: str) -> Path | None:
    """The file ``/memory open WHICH`` opens: a number from the list, ``user`` (your
    AGENTS.md, created by the editor if missing) or ``repository`` (the root's)."""
    if which == "user":
        found = [f.path for f in scope.instructions if f.layer == "user"]
        return found[0] if found else user_dir / "AGENTS.md"
    if which == "repository":
        found = [f.path for f in scope.instructions if f.layer == "repository"]
        return found[0] if found else scope.project_root / "AGENTS.md"
    rows = loaded_files(scope)
    if which.isdigit() and 1 <= int(which) <= len(rows):
        return rows[int(which) - 1][1]
    return None
