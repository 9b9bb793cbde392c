"""What the prompt can complete at the cursor: slash commands, their arguments, ``@paths``,
``@server:uri`` MCP resources and, at the start of a prompt, ``@name`` sub-agents.

This module holds the matching rules only; where the names come from (the runtime, the
config package, the model catalog, the project's files) is a :class:`CompletionSources`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

#: Sub-commands of ``/config``; the first three take a settings path.
CONFIG_ACTIONS: tuple[str, ...] = ("get", "set", "unset", "show")
CONFIG_PATH_ACTIONS = frozenset({"get", "set", "unset"})

#: Most candidates one request returns.
MAX_CANDIDATES = 50


@dataclass(frozen=True)
class Candidate:
    """One completion: ``value`` replaces the token; ``kind`` says what it is, ``about``
    what it does (empty when nothing is known)."""

    value: str
    kind: str
    about: str = ""


@dataclass(frozen=True)
class Completion:
    """Candidates for the token spanning ``start``..``end`` (offsets into the cursor's line)."""

    row: int
    start: int
    end: int
    token: str
    candidates: list[Candidate] = field(default_factory=list)

    def replaced(self, line: str, candidate: Candidate) -> tuple[str, int]:
        """``line`` with the token replaced by ``candidate`` plus a space, and the new cursor column."""
        insert = candidate.value + " "
        return line[: self.start] + insert + line[self.end :], self.start + len(insert)


@dataclass
class CompletionSources:
    """Where candidate names come from. Every source may be slow or fail; none is required."""

    commands: Callable[[], Iterable[str]] = lambda: ()
    """The slash commands' names, without the ``/`` (the app's: the engine's command table,
    the command files' and the MCP servers' prompts)."""
    config_paths: Callable[[], Iterable[str]] = lambda: ()
    roles: Callable[[], Iterable[str]] = lambda: ()
    permission_modes: Callable[[], Iterable[str]] = lambda: ()
    """What ``/mode`` takes."""
    model_ids: Callable[[], Awaitable[Iterable[str]]] | None = None
    project_files: Callable[[], Awaitable[Iterable[str]]] | None = None
    resources: Callable[[], Iterable[str]] = lambda: ()
    """MCP resources as ``server:uri`` (``@server:`` completes them)."""
    describe: Callable[[str, str], str] = lambda kind, name: ""
    """What the ``kind`` named ``name`` does (a command, a setting, a role), or ``""``."""
    agents: Callable[[], Iterable[str]] = lambda: ()
    """The sub-agents' names: ``@name`` at the start of a prompt hands it to one."""


def rank(names: Iterable[str], typed: str, *, limit: int = MAX_CANDIDATES) -> list[str]:
    """Names matching ``typed``: prefix matches first, then ones containing it (case-insensitive).

    For paths, a match at the start of a path component counts as a prefix match.
    """
    needle = typed.lower()
    prefix: list[str] = []
    component: list[str] = []
    inside: list[str] = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        low = name.lower()
        if low.startswith(needle):
            prefix.append(name)
        elif needle and ("/" + needle) in low:
            component.append(name)
        elif needle in low:
            inside.append(name)
    return (prefix + component + inside)[:limit]


class Completer:
    """Finds the completion for a prompt text and cursor position."""

    def __init__(self, sources: CompletionSources | None = None) -> None:
        self.sources = sources or CompletionSources()

    async def complete(self, text: str, row: int, column: int) -> Completion | None:
        """The completion at (``row``, ``column``) of ``text``, or ``None`` when nothing applies."""
        lines = text.split("\n")
        if row >= len(lines):
            return None
        line = lines[row]
        before = line[:column]
        token_start = max(before.rfind(" "), before.rfind("\t")) + 1
        token = before[token_start:]
        end = column
        while end < len(line) and not line[end].isspace():
            end += 1
        if token.startswith("@"):
            server, colon, _ = token[1:].partition(":")
            resources = [r for r in self._resources() if r.startswith(server + ":")]
            if colon and resources:
                found = rank(resources, token[1:])
                return self._result(row, token_start, end, token, found, "resource", prefix="@")
            names = await self._files()
            found = rank(names, token[1:])
            if row == 0 and token_start == 0:  # the prompt's start: a sub-agent, or a file
                agents = rank(self._agents(), token[1:])
                return self._mixed(row, end, token, [(agents, "agent"), (found, "file")])
            return self._result(row, token_start, end, token, found, "file", prefix="@")
        if row != 0 or not line.startswith("/"):
            return None
        words = before.split()
        if before.endswith((" ", "\t")):
            words.append("")
        if len(words) == 1:
            commands = list(self.sources.commands())
            found = rank(commands, token[1:])
            return self._result(row, token_start, end, token, found, "command", prefix="/")
        command = words[0][1:]
        names, kind = await self._arguments(command, words[1:-1])
        if not names:
            return None
        return self._result(row, token_start, end, token, rank(names, token), kind)

    async def _arguments(self, command: str, done: list[str]) -> tuple[list[str], str]:
        if command == "config":
            if not done:
                return list(CONFIG_ACTIONS), "config action"
            if len(done) == 1 and done[0] in CONFIG_PATH_ACTIONS:
                return list(self.sources.config_paths()), "setting"
            return [], ""
        if done:
            return [], ""
        if command == "model":
            return await self._models(), "model"
        if command == "role":
            return list(self.sources.roles()), "role"
        if command == "mode":
            return list(self.sources.permission_modes()), "permission mode"
        return [], ""

    async def _models(self) -> list[str]:
        if self.sources.model_ids is None:
            return []
        try:
            return list(await self.sources.model_ids())
        except Exception:
            return []

    def _resources(self) -> list[str]:
        try:
            return list(self.sources.resources())
        except Exception:
            return []

    def _agents(self) -> list[str]:
        try:
            return list(self.sources.agents())
        except Exception:
            return []

    def _mixed(
        self, row: int, end: int, token: str, groups: list[tuple[list[str], str]]
    ) -> Completion | None:
        """``@`` candidates of several kinds, in the order of ``groups`` (sub-agents first)."""
        candidates = [
            Candidate("@" + name, kind, self._about(kind, name))
            for names, kind in groups
            for name in names
        ][:MAX_CANDIDATES]
        if not candidates or (len(candidates) == 1 and candidates[0].value == token):
            return None
        return Completion(row=row, start=0, end=end, token=token, candidates=candidates)

    async def _files(self) -> list[str]:
        if self.sources.project_files is None:
            return []
        try:
            return list(await self.sources.project_files())
        except Exception:
            return []

    def _about(self, kind: str, name: str) -> str:
        try:
            return self.sources.describe(kind, name)
        except Exception:  # a description is a courtesy: the completion works without it
            return ""

    def _result(
        self,
        row: int,
        start: int,
        end: int,
        token: str,
        found: list[str],
        kind: str,
        prefix: str = "",
    ) -> Completion | None:
        candidates = [Candidate(prefix + name, kind, self._about(kind, name)) for name in found]
        if not candidates:
            return None
        if len(candidates) == 1 and candidates[0].value == token:
            return None  # already complete: let enter submit
        return Completion(row=row, start=start, end=end, token=token, candidates=candidates)
