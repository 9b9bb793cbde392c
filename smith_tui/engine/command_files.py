"""Slash commands from Markdown files (docs/DESIGN.md §3.6): the user's and the project's.

Where they are found (``engine.setup_files.origins("commands", …)``), the first folder
giving a name wins:

1. ``$XDG_CONFIG_HOME/smith/commands/`` — the user's (``~/.config/smith/commands/``);
2. ``~/.claude/commands/`` — the user's, as Claude Code keeps them;
3. ``<project root>/.smith/commands/`` — the project's;
4. ``<project root>/.claude/commands/`` — the project's, as Claude Code keeps them.

So a user command shadows a project command of the same name (a repository cannot take
over a name the user relies on), and a built-in command is never shadowed by a file (such
a file is reported and left out). The file name without ``.md`` is the command; folders are
namespaces joined with ``:`` as in Claude Code: ``frontend/component.md`` is
``/frontend:component``, which ``/component`` also runs while no other command has that
last part. Front matter (read by :mod:`smith_tui.config.front_matter`) may give
``description``, ``argument-hint``, ``model`` and ``allowed-tools``; the body is the prompt,
with ``$ARGUMENTS`` (everything after the name) and ``$1`` … ``$9`` (the words, shell-quoted)
put in by :func:`expand`; ``@path`` in it attaches the file as a typed ``@path`` does.

``allowed-tools`` only ever narrows: the turn is offered the tools named there that the role
has anyway (Claude Code's names are mapped: ``Bash(git add:*)`` is ``bash``), and a call to
any other tool is refused. It never pre-allows a call, from a user file or a project file:
every call still goes through the permission mode, the rules and the sandbox.

A file that cannot be read or whose front matter is broken is a :class:`SetupProblem`
naming the file and the line; the other files still load. Discovery walks the folders with
``scandir`` and parses only files whose size or modification time changed, so asking again
is cheap; nothing is read until the first command list or ``/`` line asks for it.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from smith_tui.engine.setup_files import (
    CLAUDE_TOOLS,
    Origin,
    SetupFileError,
    SetupProblem,
    folder_is_usable,
    read_setup_file,
)

if TYPE_CHECKING:
    from smith_tui.config.front_matter import MetaCache

#: Most command files read from one folder (the rest are reported once).
MAX_FILES_PER_FOLDER = 1000
#: Seconds a discovery is reused before the folders are looked at again.
REFRESH_S = 2.0
#: Deepest folder nesting under a commands folder (``a/b/c/name.md``).
MAX_DEPTH = 4

NAMESPACE_SEPARATOR = ":"
_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])(?![0-9])")
#: ``argument-hint: [pr-number] [priority]`` as Claude Code's documentation writes it: not
#: valid YAML (two flow lists), so the value is taken as the text it is meant to show.
_BRACKET_HINT = re.compile(r"^(argument-hint:[ \t]*)(\[.*?)[ \t]*$", re.MULTILINE)


@dataclass(frozen=True)
class CommandFile:
    """A command defined by a Markdown file."""

    name: str
    """``/frontend:component``: the file's path under its folder, ``:``-joined, lower case."""
    path: Path
    scope: str
    description: str = ""
    argument_hint: str = ""
    model: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    """``allowed-tools`` as written (``None``: not given, the turn's tools stay as they are)."""
    body: str = ""

    @property
    def namespace(self) -> str:
        """``frontend`` for ``/frontend:component``, ``""`` for a top-level command."""
        return self.name[1:].rpartition(NAMESPACE_SEPARATOR)[0]

    @property
    def short(self) -> str:
        """The last part of the name: ``/component``."""
        return "/" + self.name[1:].rpartition(NAMESPACE_SEPARATOR)[2]

    @property
    def origin(self) -> str:
        """``project``, ``user``, or with the namespace: ``project:frontend`` (as Claude Code says)."""
        return f"{self.scope}:{self.namespace}" if self.namespace else self.scope

    def tool_names(self) -> frozenset[str] | None:
        """The Smith tools ``allowed-tools`` names (``None``: no narrowing)."""
        if self.allowed_tools is None:
            return None
        names: set[str] = set()
        for entry in self.allowed_tools:
            base = entry.split("(", 1)[0].strip()
            names.update(CLAUDE_TOOLS.get(base.lower(), (base,)))
        return frozenset(names)


@dataclass
class _Cached:
    key: tuple[int, int]
    command: CommandFile | None
    problems: tuple[SetupProblem, ...]


@dataclass
class Discovery:
    """What one discovery found: the commands by name, and the problems not reported before."""

    commands: dict[str, CommandFile] = field(default_factory=dict)
    problems: list[SetupProblem] = field(default_factory=list)


class CommandFiles:
    """The command files of the folders ``folders()`` names, read lazily and kept fresh.

    ``reserved`` are the built-in command names (a file cannot take one). Each problem is
    returned by :meth:`discover` once while the file stays as it is.
    """

    def __init__(
        self,
        folders: Callable[[], Sequence[Origin]],
        reserved: Iterable[str] = (),
        cache: MetaCache | None = None,
    ) -> None:
        self._folders = folders
        self._meta = cache
        self._reserved = frozenset(name.lower() for name in reserved)
        self._cache: dict[Path, _Cached] = {}
        self._reported: set[tuple[str, object]] = set()
        self._last: dict[str, CommandFile] | None = None
        self._when = 0.0

    def discover(self) -> Discovery:
        """Walk the folders (parsing changed files only) and return the commands and the
        problems not returned before."""
        found = Discovery()
        problems: list[tuple[object, SetupProblem]] = []
        seen: set[Path] = set()
        for folder in self._folders():
            if not folder_is_usable(folder, folder.folder):
                continue  # missing, or (a project's) leading outside the project
            for path, key, problem in _walk(folder.folder):
                if problem is not None:
                    problems.append((("walk", problem.text()), problem))
                    continue
                seen.add(path)
                cached = self._cache.get(path)
                if cached is None or cached.key != key:
                    cached = _Cached(key, *_parse(path, folder, self._meta))
                    self._cache[path] = cached
                problems += [((str(path), key), p) for p in cached.problems]
                command = cached.command
                if command is None:
                    continue
                if command.name in self._reserved:
                    problem = SetupProblem(
                        path, 1, f"not used: {command.name} is a built-in command; rename the file"
                    )
                    problems.append(((str(path), key, "reserved"), problem))
                elif command.name in found.commands:
                    winner = found.commands[command.name]
                    problem = SetupProblem(
                        path,
                        1,
                        f"not used: {command.name} is already defined by {winner.path} "
                        f"({winner.scope} commands come first)",
                    )
                    problems.append(((str(path), key, "shadowed", str(winner.path)), problem))
                else:
                    found.commands[command.name] = command
        for path in list(self._cache):
            if path not in seen:
                del self._cache[path]
        for report_key, problem in problems:
            full_key = (problem.text(), report_key)
            if full_key not in self._reported:
                self._reported.add(full_key)
                found.problems.append(problem)
        self._last = found.commands
        self._when = time.monotonic()
        if self._meta is not None:
            self._meta.save()
        return found

    def current(self) -> Discovery:
        """The commands as last discovered, discovering again when that is over
        :data:`REFRESH_S` ago (the completion menu asks on every key)."""
        if self._last is None or time.monotonic() - self._when > REFRESH_S:
            return self.discover()
        return Discovery(self._last)

    def find(self, name: str, commands: Mapping[str, CommandFile]) -> CommandFile | None:
        """The command ``name`` runs: its full name, or the last part alone when only one
        command ends with it (``/component`` for ``/frontend:component``)."""
        name = name.lower()
        if name in commands:
            return commands[name]
        if NAMESPACE_SEPARATOR in name or name in self._reserved:
            return None
        matches = [c for c in commands.values() if c.short == name]
        return matches[0] if len(matches) == 1 else None


def expand(command: CommandFile, arguments: str) -> str:
    """The prompt ``command`` sends for ``arguments`` (the text typed after its name).

    ``$ARGUMENTS`` becomes the whole text, ``$1`` … ``$9`` its words (shell quoting
    groups words; a missing word is empty). A body with no placeholder gets the text
    appended as an ``ARGUMENTS:`` line, so what was typed is never lost. Values are put in
    one pass: a ``$1`` inside an argument stays as typed.
    """
    arguments = arguments.strip()
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()
    body = command.body.strip("\n")

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    if _PLACEHOLDER.search(body):
        return _PLACEHOLDER.sub(value, body)
    return f"{body}\n\nARGUMENTS: {arguments}" if arguments else body


def _walk(folder: Path) -> Iterable[tuple[Path, tuple[int, int], SetupProblem | None]]:
    """``(path, (size, mtime_ns), None)`` for every ``*.md`` file under ``folder``, sorted;
    symlinked folders are not followed. A folder over the file limit yields one problem."""
    count = 0
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack:
        current, depth = stack.pop()
        try:
            with os.scandir(current) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            yield current, (0, 0), SetupProblem(current, 1, f"cannot list: {exc.strerror}")
            continue
        subfolders = []
        for entry in listed:
            if entry.name.startswith("."):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if depth + 1 < MAX_DEPTH:
                    subfolders.append((Path(entry.path), depth + 1))
                continue
            if not entry.name.endswith(".md"):
                continue
            count += 1
            if count > MAX_FILES_PER_FOLDER:
                yield (
                    folder,
                    (0, 0),
                    SetupProblem(
                        folder,
                        1,
                        f"more than {MAX_FILES_PER_FOLDER} command files; the rest are left out",
                    ),
                )
                return
            if stat.S_ISLNK(info.st_mode):
                try:
                    info = entry.stat()  # the target's size and time
                except OSError:
                    pass
            yield Path(entry.path), (info.st_size, info.st_mtime_ns), None
        stack.extend(reversed(subfolders))


def _name(path: Path, folder: Path) -> str | None:
    parts = list(path.relative_to(folder).with_suffix("").parts)
    if not parts or not all(_PART.match(part) for part in parts):
        return None
    return "/" + NAMESPACE_SEPARATOR.join(parts).lower()


def _parse(
    path: Path, folder: Origin, cache: MetaCache | None
) -> tuple[CommandFile | None, tuple[SetupProblem, ...]]:
    """Read one file; a problem instead of a command when it cannot be used."""
    from smith_tui.config.front_matter import FrontMatterError, list_field, split, text_field

    name = _name(path, folder.folder)
    if name is None:
        message = (
            "not a command name: use letters, digits, '-', '_' or '.', starting with a "
            "letter or digit"
        )
        return None, (SetupProblem(path, 1, message),)
    try:
        text = read_setup_file(folder, path)
    except SetupFileError as exc:
        return None, (SetupProblem(path, 1, str(exc)),)
    try:
        document = split(_quote_bracket_hint(text), cache)
    except FrontMatterError as exc:
        return None, (SetupProblem(path, exc.line, exc.message),)
    meta = document.meta
    tools = list_field(meta, "allowed-tools")
    command = CommandFile(
        name=name,
        path=path,
        scope=folder.kind,
        description=text_field(meta, "description") or _first_line(document.body),
        argument_hint=text_field(meta, "argument-hint") or "",
        model=text_field(meta, "model"),
        allowed_tools=tuple(tools) if tools is not None else None,
        body=document.body,
    )
    return command, ()


def _quote_bracket_hint(text: str) -> str:
    """``text`` with an ``argument-hint`` in brackets, inside the front matter, quoted."""
    if not text.startswith("---"):
        return text
    end = text.find("\n---", 3)
    if end < 0:
        return text
    head = _BRACKET_HINT.sub(
        lambda m: m.group(1) + "'" + m.group(2).replace("'", "''") + "'", text[:end]
    )
    return head + text[end:]


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:80]
    return ""
