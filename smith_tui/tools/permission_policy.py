"""The permission policy: which tool calls run, ask first, or are refused.

Pure decisions, no I/O beyond resolving a path: :func:`subject_of` says what a
call touches (the command, the file, the host, the dispatched role),
:func:`decide` applies the mode and the rules to it. The engine
(:mod:`smith_tui.engine.permission_gate`) holds the session grants and the port
that asks the user; the executor calls it through the ``permissions`` service
(:class:`PermissionCheck`) before a tool runs.

Modes (``permissions.mode``):

- ``read-only``: ``edit``/``write`` and dispatching a worker are refused; ``bash``
  runs only sandboxed, with the project folder read-only; the rest asks.
- ``ask``: ``bash``, ``edit``, ``write``, ``web_fetch``, ``dispatch`` and MCP tools ask.
- ``auto-edit``: edits inside the project and dispatches go through; the rest asks.
- ``yolo``: nothing asks.
- ``plan``: as ``read-only``, and stricter: only reading tools and explorer dispatches run
  (``edit``/``write``, workers and MCP tools are refused, ``bash`` runs only sandboxed with
  the project read-only); the turn ends with ``present_plan`` for the user to approve.

Rules are ``tool`` or ``tool(pattern)``; a deny rule refuses in every mode, an allow
rule (or a session grant) lets through what would ask. Refusals of the mode itself
(an edit in ``read-only``) are not lifted by allow rules.

Bash commands are read as bash reads them (:mod:`smith_tui.tools.shell_words`): an allow
pattern is matched to each simple command of a *plain* line (literal words only, see
:class:`~smith_tui.tools.shell_words.Reading`) and every one must be allowed; a deny
pattern is matched to every command the line would run, unwrapped and with its name's
quotes removed. When a deny rule cannot be sure (a name or word that is not literal, code
bash evaluates out of sight, a parse error) the call asks instead of running.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from smith_tui.config.permission_settings import PERMISSION_MODES
from smith_tui.tools.shell_words import Command, read_command
from smith_tui.tools.spec import ToolContext

Action = Literal["allow", "ask", "deny"]
MODES: tuple[str, ...] = PERMISSION_MODES
READ_ONLY_MODES = frozenset({"read-only", "plan"})
"""Modes in which nothing may change the project's files (bash gets it read-only)."""
PLAN_HINT = (
    "plan mode allows only reading tools and explorer dispatches: research, then call "
    "present_plan with the plan; the user approves it before anything is changed"
)
FILE_TOOLS = frozenset({"edit", "write"})
"""Tools whose patterns are paths; a rule for either covers both."""
GATED_TOOLS = frozenset({"bash", "edit", "write", "web_fetch", "dispatch", "worktree"})
"""Built-in tools that ask in ``ask`` mode (MCP tools, ``mcp__…``, too)."""
WRITES_FILES = FILE_TOOLS | {"worktree"}
"""Tools read-only and plan modes refuse (``worktree`` merges a worker's files in)."""
MCP_PREFIX = "mcp__"

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
    names: tuple[str, ...] = ()
    """Other names of ``value`` a pattern may use (dispatch: the role's alias, ``Niobe``)."""

    def grant(self, *, exact: bool = False) -> str:
        """The rule a session grant for this call records: a command prefix (``bash(git
        status*)``) only for one plain command of a program that cannot be told to run
        something else by what follows; else the exact command, the file, the host…"""
        if self.value is None:
            return self.tool
        if self.tool == "bash":
            prefix = None if exact else command_prefix(self.value)
            return f"bash({prefix}*)" if prefix else f"bash({self.value})"
        return f"{self.tool}({self.value})"

    def describe(self) -> str:
        """``bash: git status`` — the tool and its subject, for messages."""
        return self.tool if self.value is None else f"{self.tool}: {self.value}"


SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "pip3", "uv"}
    | {"poetry", "make", "just", "gh", "dotnet", "mvn", "gradle", "bundle", "rake"}
)
"""Programs whose first argument is a subcommand: a grant keeps it (``git status``)."""
EXACT_PROGRAMS = frozenset(
    {"sudo", "doas", "su", "env", "command", "builtin", "exec", "nice", "nohup", "timeout"}
    | {"xargs", "stdbuf", "setsid", "ionice", "time", "coproc", "busybox", "watch", "flock"}
    | {"eval", "source", ".", "trap", "alias", "find", "ssh", "chroot", "nsenter", "unshare"}
    | {"node", "nodejs", "deno", "bun", "perl", "ruby", "php", "lua", "tclsh", "Rscript"}
    | {"osascript", "pwsh", "awk", "gawk", "sed", "fish", "csh", "tcsh", "npx", "uvx"}
)
"""Programs granted only as the exact command: they run other commands or code given in
their arguments, so a prefix would allow anything (shells and Pythons are matched too)."""
_INTERPRETER = re.compile(r"(?:python|pypy)[\d.]*|(?:ba|z|k|mk|da|a|ya|rba)?sh")
_SUBCOMMAND = re.compile(r"[A-Za-z][\w.:-]*")


def command_prefix(command: str) -> str | None:
    """The prefix a session grant allows, or ``None`` when only the exact command may be
    granted: the program, and its subcommand for programs that have them (``git status
    --short`` → ``git status``; ``pytest -q`` → ``pytest``). Exact: anything but one plain
    command (see :mod:`smith_tui.tools.shell_words`), leading assignments (``FOO=1 make``),
    wrappers and interpreters (``sudo``, ``env``, ``python``, ``bash``…), a subcommand
    program without a plain subcommand (``git -C dir status``)."""
    reading = read_command(command.strip())
    if not reading.plain or len(reading.top) != 1:
        return None
    only = reading.top[0]
    words = [word.value or "" for word in only.words]
    if only.assignments or not words:
        return None
    base = os.path.basename(words[0])
    if base in EXACT_PROGRAMS or _INTERPRETER.fullmatch(base):
        return None
    kept = words[:1]
    if base in SUBCOMMAND_PROGRAMS:
        if len(words) < 2 or not _SUBCOMMAND.fullmatch(words[1]):
            return None
        kept.append(words[1])
    return " ".join(_glob_escape(word) for word in kept)


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


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
        """Whether the rule applies to ``subject`` for sure.

        For bash, an allow pattern matches the exact command text, or a plain line whose
        every simple command it matches (its literal words joined with spaces); a deny
        pattern matches when the whole text, a part between ``;``/``&``/``|``, or any
        command the line would run (unwrapped, by its words or with its name's folder
        dropped: ``/bin/rm`` as ``rm``) does. See :meth:`may_match` for the unsure case.
        """
        if not self.covers_tool(subject.tool):
            return False
        if self.pattern is None or self.pattern == "*":
            return True
        if subject.value is None:
            return False
        if subject.tool == "bash":
            return self._matches_bash(subject.value, deny)
        if subject.tool in FILE_TOOLS:
            return _path_glob(self.pattern).fullmatch(subject.value) is not None
        if subject.tool == "dispatch":
            pattern = self.pattern.strip().lower()
            names = {subject.value, *subject.names}
            return any(fnmatch.fnmatchcase(name.lower(), pattern) for name in names)
        pattern = self.pattern.lower() if subject.tool == "web_fetch" else self.pattern
        return fnmatch.fnmatchcase(subject.value, pattern)

    def _matches_bash(self, command: str, deny: bool) -> bool:
        pattern = self.pattern or "*"
        if command == pattern:
            return True
        reading = read_command(command)
        if not deny:
            return (
                reading.plain
                and bool(reading.top)
                and all(self.matches_command(each) for each in reading.top)
            )
        parts = [command, *(part.strip() for part in _SPLIT.split(command))]
        if any(fnmatch.fnmatchcase(part, pattern) for part in parts if part):
            return True
        return any(
            fnmatch.fnmatchcase(text, pattern)
            for each in reading.commands
            for text in _deny_texts(each)
        )

    def matches_command(self, command: Command) -> bool:
        """Whether the pattern matches one literal simple command (assignments included)."""
        text = command.literal()
        return text is not None and fnmatch.fnmatchcase(text, self.pattern or "*")

    def may_match(self, subject: Subject) -> str | None:
        """For a bash deny rule that does not match for sure: why it might (a command name
        that is not literal, words that are not literal where the pattern could still
        match, code run out of sight, a parse error), or ``None`` when it cannot."""
        if subject.tool != "bash" or subject.value is None or not self.covers_tool("bash"):
            return None
        reading = read_command(subject.value)
        if reading.unsure:
            return reading.unsure[0]
        pattern = self.pattern or "*"
        for each in reading.commands:
            argv = each.argv
            unknown = next((word for word in argv if word.value is None), None)
            if unknown is None:
                continue
            known = [word.value for word in argv if word.value is not None]
            lead = [word.value or "" for word in argv[: argv.index(unknown)]]
            for name in _names(lead[0]) if lead else ():
                start = " ".join([name, *lead[1:]]) + " "
                if _could_start(pattern, start) or fnmatch.fnmatchcase(
                    " ".join([name, *known[1:]]), pattern
                ):
                    return f"{unknown.describe()} is not a literal word"
        return None


def _names(name: str) -> list[str]:
    base = os.path.basename(name)
    return [name] if base == name or not base else [name, base]


def _deny_texts(command: Command) -> list[str]:
    """The texts a deny pattern is matched to for one literal command: its words, and
    with its name's folder dropped (``/usr/bin/rm -rf x`` → ``rm -rf x``)."""
    words = [word.value for word in command.argv]
    if not words or any(word is None for word in words):
        return []
    rest = [word or "" for word in words[1:]]
    return [" ".join([name, *rest]) for name in _names(words[0] or "")]


def _could_start(pattern: str, prefix: str) -> bool:
    """Whether some text that starts with ``prefix`` matches the glob ``pattern``."""
    tokens = _glob_tokens(pattern)
    states = _closure(tokens, {0})
    for ch in prefix:
        after: set[int] = set()
        for state in states:
            if state >= len(tokens):
                continue
            kind, test = tokens[state]
            if kind == "star":
                after.add(state)
            elif test(ch):
                after.add(state + 1)
        states = _closure(tokens, after)
        if not states:
            return False
    return True


def _closure(tokens: list[tuple[str, Any]], states: set[int]) -> set[int]:
    out = set(states)
    for state in sorted(states):
        while state < len(tokens) and tokens[state][0] == "star":
            state += 1
            out.add(state)
    return out


def _glob_tokens(pattern: str) -> list[tuple[str, Any]]:
    """``pattern`` as fnmatch reads it: ``*``, ``?``, ``[…]`` and literal characters."""
    tokens: list[tuple[str, Any]] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            tokens.append(("star", None))
            i += 1
            continue
        if ch == "?":
            tokens.append(("one", lambda _c: True))
            i += 1
            continue
        if ch == "[":
            end = i + 1
            if end < len(pattern) and pattern[end] == "!":
                end += 1
            if end < len(pattern) and pattern[end] == "]":
                end += 1
            end = pattern.find("]", end)
            if end >= 0:
                regex = re.compile(fnmatch.translate(pattern[i : end + 1]))
                tokens.append(("one", lambda c, r=regex: r.match(c) is not None))
                i = end + 1
                continue
        tokens.append(("one", lambda c, want=ch: c == want))
        i += 1
    return tokens


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
    unsure: bool = False
    """It asks because a deny rule cannot be sure: only the exact command may be granted."""


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
    refusals, then a deny rule that cannot be sure (it asks, in every mode; only a grant
    of that exact command lifts it), then allow rules and grants for what would ask."""
    deny, grants = list(deny), list(grants)
    for rule in deny:
        if rule.matches(subject, deny=True):
            return Verdict(
                "deny", f"the rule {rule.text} in permissions.deny refuses it", rule.text
            )
    base = _mode_verdict(mode, subject, sandboxed)
    if base.action == "deny":
        return base
    for rule in deny:
        why = rule.may_match(subject)
        if why is None:
            continue
        for grant in grants:
            if grant.covers_tool(subject.tool) and grant.pattern == subject.value:
                return Verdict("allow", f"allowed by {grant.text} (a session grant)", grant.text)
        return Verdict(
            "ask",
            f"the rule {rule.text} in permissions.deny may apply: {why}",
            rule.text,
            unsure=True,
        )
    if base.action != "ask":
        return base
    sources = [(rule, "permissions.allow") for rule in allow]
    sources += [(rule, "a session grant") for rule in grants]
    if subject.tool == "bash":
        return _allow_bash(subject.value or "", sources, base)
    for rule, source in sources:
        if rule.matches(subject):
            return Verdict("allow", f"allowed by {rule.text} ({source})", rule.text)
    return base


def _allow_bash(command: str, sources: list[tuple[Rule, str]], base: Verdict) -> Verdict:
    """Allow rules for a bash line: the whole text, or each simple command of a plain one;
    when a rule would have matched the raw text, the reason names what kept it out."""
    rules = [(rule, source) for rule, source in sources if rule.covers_tool("bash")]
    for rule, source in rules:
        if rule.pattern in (None, "*") or rule.pattern == command:
            return Verdict("allow", f"allowed by {rule.text} ({source})", rule.text)
    reading = read_command(command)
    if reading.plain and reading.top:
        hits = [
            next((pair for pair in rules if pair[0].matches_command(each)), None)
            for each in reading.top
        ]
        used = [hit for hit in hits if hit is not None]
        if not used:
            return base
        if len(used) < len(hits):
            missing = reading.top[hits.index(None)].literal() or ""
            return Verdict("ask", f"{base.reason}; no allow rule covers `{_cut_text(missing)}`")
        names = ", ".join(dict.fromkeys(f"{rule.text} ({source})" for rule, source in used))
        return Verdict("allow", f"allowed by {names}", used[0][0].text)
    naive = next(
        (r for r, _ in rules if r.pattern and fnmatch.fnmatchcase(command, r.pattern)), None
    )
    if naive is not None and reading.obstacle:
        return Verdict(
            "ask", f"{base.reason}; {naive.text} does not apply: {reading.obstacle}", naive.text
        )
    return base


def _cut_text(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _mode_verdict(mode: str, subject: Subject, sandboxed: bool) -> Verdict:
    tool = subject.tool
    if mode == "yolo" or not is_gated(tool):
        return Verdict("allow", f"{mode} mode")
    if mode == "plan":
        return _plan_verdict(subject, sandboxed)
    if mode == "read-only":
        if tool in WRITES_FILES:
            return Verdict("deny", "permissions.mode is read-only: files may not be changed")
        if tool == "dispatch" and subject.value != "explorer":
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


def _plan_verdict(subject: Subject, sandboxed: bool) -> Verdict:
    """Plan mode: reading only. Fails closed: what cannot be known to only read is refused
    (an MCP tool may do anything), with a reason that tells the model what to do instead."""
    tool = subject.tool
    if tool in WRITES_FILES:
        return Verdict("deny", f"{tool} is refused: {PLAN_HINT}")
    if tool == "dispatch":
        if subject.value == "explorer":
            return Verdict("allow", "plan mode: the explorer only reads")
        return Verdict("deny", f"dispatching {subject.value} is refused: {PLAN_HINT}")
    if tool == "bash":
        if sandboxed:
            return Verdict("allow", "plan mode: sandboxed, project read-only")
        return Verdict(
            "deny",
            "bash is refused: plan mode runs bash only sandboxed with the project read-only, "
            "and it cannot run sandboxed here (bubblewrap is missing or sandbox.mode is off)",
        )
    if tool.startswith(MCP_PREFIX):
        return Verdict("deny", f"{tool} is refused (it may change things): {PLAN_HINT}")
    return Verdict("ask", "plan mode asks before this tool")


def project_writable(ctx: ToolContext) -> bool:
    """Whether a sandboxed command may write the project (not in ``read-only`` or ``plan``)."""
    gate = ctx.services.permissions
    return gate is None or gate.mode not in READ_ONLY_MODES
