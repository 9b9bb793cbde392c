"""Permission gate of a turn: the mode, the rules, session grants and the port that asks.

The policy itself is :mod:`smith_tui.tools.permission_policy`. A :class:`PermissionGate` is
made per top-level turn (its dispatched children share it, so they inherit the mode);
the executor consults it through the ``permissions`` service before a tool runs.

Asking is front-end neutral: an :data:`AskPort` is an async callable the front end
supplies (the app shows a modal; headless has none, so a call that would ask is
refused with a result that says which rule or flag would allow it). Session grants
("allow this command prefix / this file") are kept in the conversation's metadata, so
``--continue`` keeps them; the model cannot write there.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from smith_tui.engine import events as ev
from smith_tui.engine.hooks.hook_set import Asker, Hooks
from smith_tui.engine.roles import UnknownRoleError, resolve_role
from smith_tui.tools.permission_policy import (
    Rule,
    Subject,
    Verdict,
    decide,
    parse_rules,
    subject_of,
)
from smith_tui.tools.sandbox import sandbox_state
from smith_tui.tools.spec import ToolContext

GRANTS_KEY = "permission_grants"
"""The conversation metadata entry holding the session grants (rule texts)."""
PREVIEW_LINES = 400
"""Most lines of a diff or argument preview shown when asking."""


@dataclass(frozen=True)
class PermissionRequest:
    """One question for the user: may this call run?"""

    tool: str
    role: str
    job_id: str | None
    subject: str
    """The command, file, host or role the call touches (empty for other tools)."""
    arguments: Mapping[str, Any]
    preview: str
    """What to show: the command, a unified diff for edit/write, the arguments."""
    reason: str
    """Why it asks (the mode)."""
    grant: str
    """The rule "allow for the session" would add (``bash(git status*)``, ``edit(src/a.py)``)."""
    denied_before: bool = False
    """The user already denied this very call (same tool, same arguments) in this turn: the
    question then offers to deny and stop the turn."""


ReplyDecision = Literal["once", "session", "deny", "stop"]
"""What the user answered: run it once, allow it for the session, deny, or deny and stop."""


@dataclass(frozen=True)
class PermissionReply:
    """The user's answer: run it once, allow ``request.grant`` for the session, deny, or
    deny and stop the turn (``stop``)."""

    decision: ReplyDecision
    reason: str = ""
    """With ``deny``: an optional note passed to the model in the tool result."""


AskPort = Callable[[PermissionRequest], Awaitable[PermissionReply]]
"""What a front end implements to ask the user (``None``: nobody can be asked)."""


class SessionGrants:
    """The session grants of conversations, kept in their metadata (``permission_grants``)."""

    def __init__(self, conversations: Any) -> None:
        self.conversations = conversations

    def rules(self, conversation_id: str | None) -> list[str]:
        """The grants of ``conversation_id`` (rule texts, oldest first)."""
        conv = self.conversations.get(conversation_id) if conversation_id else None
        value = (conv.metadata or {}).get(GRANTS_KEY) if conv is not None else None
        return [str(item) for item in value] if isinstance(value, list) else []

    def add(self, conversation_id: str | None, rule: str) -> None:
        """Record ``rule`` for ``conversation_id`` (kept across ``--continue``)."""
        conv = self.conversations.get(conversation_id) if conversation_id else None
        if conv is None:
            return
        metadata = dict(conv.metadata or {})
        grants = list(metadata.get(GRANTS_KEY) or [])
        if rule not in grants:
            grants.append(rule)
        metadata[GRANTS_KEY] = grants
        self.conversations.set_metadata(conv.id, metadata)


@dataclass
class PermissionGate:
    """The permission policy of one top-level turn and the children it dispatches."""

    mode: str
    conversation_id: str | None
    grants: SessionGrants
    emit: Callable[[ev.Event], None]
    ask: AskPort | None = None
    allow: Sequence[Rule] = ()
    deny: Sequence[Rule] = ()
    flag_hint: str = "--permission-mode"
    """How the front end names the mode switch in a refusal (headless: the flag)."""
    stop_turn: Callable[[str], None] | None = None
    """Cancels the top-level turn (a ``stop`` answer); ``None``: ``stop`` only denies."""
    hooks: Hooks | None = None
    """The session's hooks for this turn (PermissionRequest, the notification of a question)."""
    _user_denied: set[str] = field(default_factory=set, repr=False)
    """The calls (tool and arguments) the user denied in this turn."""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    @classmethod
    def from_config(
        cls,
        mode: str,
        config: Mapping[str, Any],
        *,
        conversation_id: str | None,
        grants: SessionGrants,
        emit: Callable[[ev.Event], None],
        ask: AskPort | None,
        flag_hint: str = "--permission-mode",
    ) -> PermissionGate:
        """The gate for ``mode`` with the ``permissions.allow``/``deny`` rules of ``config``."""
        table = config.get("permissions") or {}
        return cls(
            mode=mode,
            conversation_id=conversation_id,
            grants=grants,
            emit=emit,
            ask=ask,
            allow=parse_rules(table.get("allow") or ()),
            deny=parse_rules(table.get("deny") or ()),
            flag_hint=flag_hint,
        )

    def verdict(self, subject: Subject, ctx: ToolContext) -> Verdict:
        """What the mode, the rules and the grants say about ``subject``."""
        return decide(
            self.mode,
            subject,
            allow=self.allow,
            deny=self.deny,
            grants=parse_rules(self.grants.rules(self.conversation_id)),
            sandboxed=_sandboxed(ctx) if subject.tool == "bash" else True,
        )

    async def check(self, name: str, args: Any, ctx: ToolContext) -> str | None:
        """``None`` when the call may run, else the refusal the model reads.

        A call that would ask waits for the user (one question at a time; a grant
        given meanwhile answers the ones queued behind it). Cancelling the turn ends
        the wait: the executor then reports the call cancelled.
        """
        subject = role_subject(subject_of(name, args, ctx))
        verdict = self.verdict(subject, ctx)
        # A PreToolUse hook's answer (engine/hooks/tool_calls.py): allow skips the
        # question, never a deny; ask asks even where the rules allow.
        forced = ctx.hook_permission
        if verdict.action == "allow" and forced != "ask":
            return None
        if verdict.action == "deny":
            return self._denied(subject, ctx, f"{verdict.reason}.")
        if forced == "allow":
            return None
        if forced == "ask" and verdict.action == "allow":
            verdict = Verdict("ask", "a PreToolUse hook asks for confirmation")
        arguments = args.model_dump() if hasattr(args, "model_dump") else dict(args)
        refusal = await self._permission_hooks(name, arguments, subject, ctx)
        if refusal is not None:
            return refusal or None
        if self.ask is None:
            return self._denied(subject, ctx, self._cannot_ask(subject, verdict, ctx))
        key = _call_key(name, arguments)
        async with self._lock:
            if forced != "ask":
                verdict = self.verdict(subject, ctx)  # a grant may have come while we waited
            if verdict.action == "allow":
                return None
            hooks = self.hooks
            if hooks is not None:
                hooks.notify(f"Smith asks to run {name}", "permission_prompt", _asker(ctx))
            request = PermissionRequest(
                tool=name,
                role=ctx.role,
                job_id=ctx.job_id,
                subject=subject.value or "",
                arguments=arguments,
                preview=await asyncio.to_thread(preview, name, args, ctx),
                reason=verdict.reason,
                grant=subject.grant(exact=verdict.unsure),
                denied_before=key in self._user_denied,
            )
            reply = await _until_cancelled(self.ask(request), ctx)
        if reply is None:
            return "the turn was cancelled while waiting for permission"
        if reply.decision == "session":
            self.grants.add(self.conversation_id, request.grant)
        if reply.decision in ("once", "session"):
            return None
        self._user_denied.add(key)
        why = f" The user said: {reply.reason.strip()}" if reply.reason.strip() else ""
        if reply.decision == "stop":
            refusal = self._denied(
                subject,
                ctx,
                f"the user denied this call again ({subject.describe()}) and "
                f"stopped the turn.{why}",
            )
            if self.stop_turn is not None:
                self.stop_turn(f"you denied {name} again and stopped the turn")
            return refusal
        return self._denied(subject, ctx, f"the user denied this call ({subject.describe()}).{why}")

    async def _permission_hooks(
        self, name: str, arguments: Mapping[str, Any], subject: Subject, ctx: ToolContext
    ) -> str | None:
        """``PermissionRequest`` hooks: ``""`` when one allowed the call, a refusal when one
        denied it, ``None`` when they left it to the question."""
        hooks = self.hooks
        if hooks is None:
            return None
        answer = await hooks.permission_request(name, dict(arguments), _asker(ctx))
        if answer.blocked or answer.decision == "deny":
            why = answer.reason or "no reason given"
            return self._denied(subject, ctx, f"a PermissionRequest hook denied it: {why}")
        if answer.decision == "allow":
            return ""
        return None

    def _cannot_ask(self, subject: Subject, verdict: Verdict, ctx: ToolContext) -> str:
        if verdict.unsure:
            return (
                f"{verdict.reason}, and nobody can be asked here. Write the command with "
                "literal words (no expansions, a literal command name) so the rule can be "
                "checked."
            )
        # Only what was checked to let this very call through is offered.
        ways = []
        rule = subject.grant()
        if self._allows(self.mode, subject, ctx, extra=rule):
            ways.append(f"add {rule} to permissions.allow")
        for mode, what in (("auto-edit", "edits inside the project"), ("yolo", "everything")):
            if mode != self.mode and self._allows(mode, subject, ctx):
                ways.append(f"use {self.flag_hint} {mode} ({what})")
                break
        if not ways:
            return f"{verdict.reason}, and nobody can be asked here."
        return f"{verdict.reason}, and nobody can be asked here. To allow it, {' or '.join(ways)}."

    def _allows(self, mode: str, subject: Subject, ctx: ToolContext, extra: str = "") -> bool:
        """Whether ``mode`` (with the rule ``extra`` added to the allow rules) lets it run."""
        try:
            allow = [*self.allow, *parse_rules([extra])] if extra else self.allow
        except ValueError:
            return False  # a rule that does not parse allows nothing
        verdict = decide(
            mode,
            subject,
            allow=allow,
            deny=self.deny,
            grants=parse_rules(self.grants.rules(self.conversation_id)),
            sandboxed=_sandboxed(ctx) if subject.tool == "bash" else True,
        )
        return verdict.action == "allow"

    def _denied(self, subject: Subject, ctx: ToolContext, reason: str) -> str:
        message = f"permission denied: {reason}"
        self.emit(
            ev.PermissionDenied(
                tool=subject.tool,
                subject=subject.value or "",
                reason=message,
                call_id=ctx.call_id,
                role=ctx.role,
                job_id=ctx.job_id,
            )
        )
        return message


def _asker(ctx: ToolContext) -> Asker:
    """Who asks, for the hooks: the call's role, job, turn and id."""
    return Asker(ctx.role, ctx.job_id, ctx.turn_id, ctx.call_id, ctx.cancel)


def _call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """One call by tool and arguments (arguments compared by value)."""
    return json.dumps([name, arguments], sort_keys=True, default=str)


def role_subject(subject: Subject) -> Subject:
    """``subject`` with a dispatched role by its one name (``Niobe``, `` worker `` → ``worker``)
    and its alias as another name rules may use; an unknown role stays as given."""
    if subject.tool != "dispatch" or subject.value is None:
        return subject
    try:
        spec = resolve_role(subject.value)
    except UnknownRoleError:
        return subject
    return Subject(subject.tool, spec.name, subject.inside_project, (spec.alias,))


async def _until_cancelled(
    question: Awaitable[PermissionReply], ctx: ToolContext
) -> PermissionReply | None:
    """The answer to ``question``, or ``None`` once the call is cancelled (the question is
    then cancelled too, which closes the front end's prompt)."""
    asking = asyncio.ensure_future(question)
    cancelled = asyncio.ensure_future(ctx.cancel.wait())
    try:
        await asyncio.wait({asking, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancelled.cancel()
        if not asking.done():
            asking.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asking
    if ctx.is_cancelled() or asking.cancelled():
        return None
    if asking.exception() is not None:  # a broken front end denies; it never ends the turn
        return PermissionReply("deny", f"(the question failed: {asking.exception()!r:.200})")
    return asking.result()


def _sandboxed(ctx: ToolContext) -> bool:
    return sandbox_state(ctx.config.sandbox).active


def preview(name: str, args: Any, ctx: ToolContext) -> str:
    """What the user sees when asked: the command, a diff of the change, or the arguments."""
    try:
        if name == "bash":
            return str(args.command)
        if name == "write":
            return _diff(ctx, str(args.path), lambda _old: str(args.content))
        if name == "edit":
            return _diff(ctx, str(args.path), lambda old: _edited(old, args))
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    data = args.model_dump() if hasattr(args, "model_dump") else dict(args)
    lines = [f"{key}: {value}" for key, value in data.items() if value is not None]
    return _cut("\n".join(lines))


def _diff(ctx: ToolContext, raw: str, change: Callable[[str], str]) -> str:
    path = Path(os.path.expanduser(raw))
    path = path if path.is_absolute() else Path(ctx.cwd) / path
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    new = change(old)
    label = raw if path.exists() else f"{raw} (new file)"
    diff = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), label, label
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in diff)
    return _cut(text.rstrip("\n") or f"{raw}: no change")


def edited_text(old: str, args: Any) -> str:
    """The file text after the line edit of ``args`` (an object with ``operation``,
    ``start_line``, ``end_line`` and ``text``): what ``edit`` would write over ``old``."""
    return _edited(old, args)


def _edited(old: str, args: Any) -> str:
    """The file text after the line edit of ``args`` (the same operations as ``edit``)."""
    lines = old.splitlines(keepends=True)
    start = int(args.start_line)
    new = [] if args.text is None else str(args.text).splitlines(keepends=True)
    if new and not new[-1].endswith("\n"):
        new[-1] += "\n"
    if args.operation == "insert":
        return "".join(lines[: start - 1] + new + lines[start - 1 :])
    end = int(args.end_line or start)
    return "".join(lines[: start - 1] + ([] if args.operation == "delete" else new) + lines[end:])


def _cut(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= PREVIEW_LINES:
        return text
    return "\n".join([*lines[:PREVIEW_LINES], f"… {len(lines) - PREVIEW_LINES} more lines"])


__all__ = [
    "AskPort",
    "PermissionGate",
    "PermissionReply",
    "PermissionRequest",
    "SessionGrants",
    "edited_text",
    "preview",
    "role_subject",
]
