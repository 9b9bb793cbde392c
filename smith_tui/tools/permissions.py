"""The permission policy: which tool calls run, ask first, or are refused.

Pure decisions, no I/O beyond resolving a path: :func:`subject_of` says what a
call touches (the command, the file, the host, the dispatched role),
:func:`decide` applies the mode and the rules to it. The engine
(:mod:`smith_tui.engine.permissions`) holds the session grants and the port
that asks the user; the executor calls it through the ``permissions`` service
(:class:`PermissionCheck`) before a tool runs.

Modes (``permissions.mode``):

- ``read-only``: ``edit``/``write`` and dispatching a worker are refused; ``bash``
  runs only sandboxed, with the project folder read-only; the rest asks.
- ``ask``: ``bash``, ``edit``, ``write``, ``web_fetch``, ``dispatch`` and MCP tools ask.
- ``auto-edit``: edits inside the project and dispatches go through; the rest asks.
- ``yolo``: nothing asks.

Rules are ``tool`` or ``tool(pattern)``; a deny rule refuses in every mode, an allow
rule (or a session grant) lets through what would ask. Refusals of the mode itself
(an edit in ``read-only``) are not lifted by allow rules.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from smith_tui.tools.spec import ToolContext

Action = Literal["allow", "ask", "deny"]
MODES: tuple[str, ...] = ("read-only", "ask", "auto-edit", "yolo")
FILE_TOOLS = frozenset({"edit", "write"})
"""Tools whose patterns are paths; a rule for either covers both."""
GATED_TOOLS = frozenset({"bash", "edit", "write", "web_fetch", "dispatch"})
"""Built-in tools that ask in ``ask`` mode (MCP tools, ``mcp__…``, too)."""
MCP_PREFIX = "mcp__"

_COMPOUND = re.compile(r"[;&|<>`\n\r]|\$\(")
"""Shell syntax that chains or redirects: an allow pattern never matches such a command."""
_SPLIT = re.compile(r"\|\||&&|[;&|\n\r]")


class PermissionCheck(Protocol):
    """The ``permissions`` service the executor consults before a tool runs."""

    mode: str

    async def check(self, name: str, args: Any, ctx: ToolContext) -> str | None:
        """``None`` to run the call, else the reason it may not (the tool result)."""
        ...


def is_gated(tool: str) -> bool:
    """Whether ``tool`` is one the modes govern (the others always run unless denied)."""
    return tool in GATED_TOOLS or tool.startswith(MCP_PREFIX)


@dataclass(frozen=True)
class Subject:
    """What one call touches, in the terms rules are written in."""

    tool: str
    value: str | None = None
    """The command (bash), the path (edit/write: project-relative, else absolute), the host
    (web_fetch), the target role (dispatch); ``None`` for tools without patterns."""
    inside_project: bool = True
    """For edit/write: the file lies inside the project folder."""

    def grant(self) -> str:
        """The rule a session grant for this call records (a command prefix, the file…)."""
        if self.value is None:
            return self.tool
        if self.tool == "bash" and _COMPOUND.search(self.value):
            return f"bash({self.value})"  # no prefix can allow it: only this exact command
        if self.tool == "bash":
            return f"bash({command_prefix(self.value)}*)"
        return f"{self.tool}({self.value})"

    def describe(self) -> str:
        """``bash: git status`` — the tool and its subject, for messages."""
        return self.tool if self.value is None else f"{self.tool}: {self.value}"


SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv"}
    | {"poetry", "make", "just", "gh", "dotnet", "mvn", "gradle", "bundle", "rake"}
)
"""Programs whose first argument is a subcommand: a grant keeps it (``git status``)."""


def command_prefix(command: str) -> str:
    """The prefix a session grant allows: the program, and its subcommand for programs
    that have them (``git status --short`` → ``git status``; ``pytest -q`` → ``pytest``)."""
    try:
        words = shlex.split(command.strip())
    except ValueError:
        words = command.split()
    if not words:
        return command.strip()
    kept = words[:1]
    if (
        len(words) > 1
        and os.path.basename(words[0]) in SUBCOMMAND_PROGRAMS
        and re.fullmatch(r"[A-Za-z][\w.:-]*", words[1])
    ):
        kept.append(words[1])
    return " ".join(kept)


def _project(ctx: ToolContext) -> Path:
    return Path(os.path.realpath(ctx.project_root or ctx.cwd))


def subject_of(name: str, args: Any, ctx: ToolContext) -> Subject:
    """The subject of a call of ``name`` with validated ``args``."""
    if name == "bash":
        return Subject(name, str(args.command).strip())
    if name in FILE_TOOLS:
        raw = os.path.expanduser(str(args.path).strip())
        full = Path(os.path.realpath(Path(ctx.cwd) / raw))
        root = _project(ctx)
        if full == root or root in full.parents:
            return Subject(name, full.relative_to(root).as_posix())
        return Subject(name, str(full), inside_project=False)
    if name == "web_fetch":
        host = urlsplit(str(args.url).strip()).hostname or ""
        return Subject(name, host.lower())
    if name == "dispatch":
        return Subject(name, str(args.target_role))
    return Subject(name)


@dataclass(frozen=True)
class Rule:
    """One ``tool`` or ``tool(pattern)`` entry of ``permissions.allow``/``deny`` or a grant."""

    tool: str
    pattern: str | None
    text: str

    @classmethod
    def parse(cls, text: str) -> Rule:
        """Read a rule; raises ``ValueError`` with a fix for a malformed one."""
        match = re.fullmatch(r"\s*([A-Za-z0-9_*?\-]+)\s*(?:\((.+)\))?\s*", text, re.DOTALL)
        if not match:
            raise ValueError(
                f"{text!r} is not a permission rule: write a tool name, optionally with a "
                "pattern in parentheses, e.g. bash(git status*) or edit(src/**)"
            )
        return cls(match.group(1), match.group(2), text.strip())

    def covers_tool(self, tool: str) -> bool:
        """Whether the rule names ``tool`` (``edit`` and ``write`` rules cover both)."""
        names = FILE_TOOLS if tool in FILE_TOOLS else {tool}
        return any(fnmatch.fnmatchcase(name, self.tool) for name in names)

    def matches(self, subject: Subject, *, deny: bool = False) -> bool:
        """Whether the rule applies to ``subject``.

        An allow pattern never matches a bash command that chains, pipes or redirects
        (it could smuggle a second command past the prefix) unless the pattern is that
        exact command; a deny pattern matches when the whole command or any part of it
        does.
        """
        if not self.covers_tool(subject.tool):
            return False
        if self.pattern is None or self.pattern == "*":
            return True
        if subject.value is None:
            return False
        if subject.tool == "bash":
            command = subject.value
            if deny:
                parts = [command, *(part.strip() for part in _SPLIT.split(command))]
                return any(fnmatch.fnmatchcase(part, self.pattern) for part in parts if part)
            if command == self.pattern:
                return True
            return not _COMPOUND.search(command) and fnmatch.fnmatchcase(command, self.pattern)
        if subject.tool in FILE_TOOLS:
            return _path_glob(self.pattern).fullmatch(subject.value) is not None
        pattern = self.pattern.lower() if subject.tool == "web_fetch" else self.pattern
        return fnmatch.fnmatchcase(subject.value, pattern)


def _path_glob(pattern: str) -> re.Pattern[str]:
    """A path glob: ``*`` within one folder, ``**`` across folders (``src/**``)."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def parse_rules(texts: Iterable[str]) -> list[Rule]:
    """The rules of ``texts``, skipping malformed ones (the config loader reports those)."""
    rules = []
    for text in texts:
        try:
            rules.append(Rule.parse(str(text)))
        except ValueError:
            continue
    return rules


@dataclass(frozen=True)
class Verdict:
    """What to do with one call, and why (the mode, or the rule that decided)."""

    action: Action
    reason: str
    rule: str | None = None


def decide(
    mode: str,
    subject: Subject,
    *,
    allow: Iterable[Rule] = (),
    deny: Iterable[Rule] = (),
    grants: Iterable[Rule] = (),
    sandboxed: bool = True,
) -> Verdict:
    """Apply ``mode`` and the rules to ``subject``: deny rules first, then the mode's own
    refusals, then allow rules and grants for what would ask."""
    for rule in deny:
        if rule.matches(subject, deny=True):
            return Verdict(
                "deny", f"the rule {rule.text} in permissions.deny refuses it", rule.text
            )
    base = _mode_verdict(mode, subject, sandboxed)
    if base.action != "ask":
        return base
    for source, rules in (("permissions.allow", allow), ("a session grant", grants)):
        for rule in rules:
            if rule.matches(subject):
                return Verdict("allow", f"allowed by {rule.text} ({source})", rule.text)
    return base


def _mode_verdict(mode: str, subject: Subject, sandboxed: bool) -> Verdict:
    tool = subject.tool
    if mode == "yolo" or not is_gated(tool):
        return Verdict("allow", f"{mode} mode")
    if mode == "read-only":
        if tool in FILE_TOOLS:
            return Verdict("deny", "permissions.mode is read-only: files may not be changed")
        if tool == "dispatch" and subject.value == "worker":
            return Verdict("deny", "permissions.mode is read-only: workers may not be dispatched")
        if tool == "dispatch":
            return Verdict("allow", "read-only mode: the explorer inherits it")
        if tool == "bash":
            if sandboxed:
                return Verdict("allow", "read-only mode: sandboxed, project read-only")
            return Verdict(
                "deny",
                "permissions.mode is read-only and bash cannot run sandboxed here "
                "(install bubblewrap, or choose another mode)",
            )
        return Verdict("ask", "read-only mode asks before this tool")
    if mode == "auto-edit":
        if tool in FILE_TOOLS and subject.inside_project:
            return Verdict("allow", "auto-edit mode: an edit inside the project")
        if tool == "dispatch":
            return Verdict("allow", "auto-edit mode: the sub-agent inherits it")
        where = " outside the project" if tool in FILE_TOOLS else ""
        return Verdict("ask", f"auto-edit mode asks before {tool}{where}")
    return Verdict("ask", f"{mode} mode asks before {tool}")


def project_writable(ctx: ToolContext) -> bool:
    """Whether a sandboxed command may write the project (not in ``read-only`` mode)."""
    gate = ctx.services.get("permissions") if isinstance(ctx.services, Mapping) else None
    return getattr(gate, "mode", None) != "read-only"
