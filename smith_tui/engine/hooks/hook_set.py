"""The hooks of a session (:class:`Hooks`): which run for an event, and what they decided.

The engine calls one method per event at its point of the session (README, Hooks):
:meth:`Hooks.before_tool` / :meth:`Hooks.after_tool` around every tool call (sub-agents'
included, with their role), :meth:`Hooks.permission_request` when a call would ask,
:meth:`Hooks.prompt_submitted` before a top-level turn's first request,
:meth:`Hooks.stopping` when a turn (``Stop``) or a sub-agent (``SubagentStop``) would
end, :meth:`Hooks.subagent_start`, :meth:`Hooks.pre_compact`, :meth:`Hooks.notify`,
:meth:`Hooks.session_start` and :meth:`Hooks.session_end`. The hooks matching one event
run at once; each run is a :class:`~smith_tui.engine.events.HookRun` event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from smith_tui.cancel import CancelToken
from smith_tui.config.hooks import HookEntry
from smith_tui.engine import events as ev
from smith_tui.engine.hooks.claude_names import claude_input, claude_name
from smith_tui.engine.hooks.hook_runner import hook_environment, run_hook_command
from smith_tui.engine.hooks.project import ProjectHooks
from smith_tui.engine.hooks.verdict import Decision, HookVerdict, read_verdict

log = logging.getLogger(__name__)

Source = Literal["user", "project"]
MAX_STOP_BLOCKS = 5
"""Times in one turn a ``Stop``/``SubagentStop`` hook may keep the model going."""
_PRECEDENCE: dict[Decision, int] = {"deny": 3, "ask": 2, "allow": 1}


@dataclass(frozen=True)
class ConfiguredHook:
    """One hook entry, with the event it is for and where it was configured."""

    event: str
    entry: HookEntry
    source: Source = "user"

    def matches(self, subject: str | None) -> bool:
        """Whether the entry's matcher takes ``subject`` (a tool name, a source...)."""
        pattern = self.entry.matcher.strip()
        if pattern in ("", "*") or subject is None:
            return True
        names = {subject, claude_name(subject)}  # a tool by Smith's or Claude Code's name
        if pattern.lower() in {name.lower() for name in names}:
            return True
        try:
            return any(re.fullmatch(pattern, n, flags=re.IGNORECASE) for n in names)
        except re.error:
            return False


@dataclass(frozen=True)
class HookAnswer:
    """What the hooks of one event decided together."""

    blocked: bool = False
    """Exit 2 or ``decision: block`` (a ``deny`` included)."""
    reason: str = ""
    context: str = ""
    decision: Decision | None = None
    """The strongest permission decision: deny over ask over allow."""
    stop: bool = False
    """``continue: false``: end the turn (``reason`` says why)."""

    @classmethod
    def combine(cls, verdicts: Sequence[HookVerdict]) -> HookAnswer:
        """The joint answer of ``verdicts`` (in the order the hooks are configured)."""
        decision: Decision | None = None
        for verdict in verdicts:
            if verdict.decision is not None and (
                decision is None or _PRECEDENCE[verdict.decision] > _PRECEDENCE[decision]
            ):
                decision = verdict.decision
        stop = any(v.stop for v in verdicts)
        blocked = any(v.blocks for v in verdicts)
        wanted = [v for v in verdicts if v.stop] if stop else verdicts
        if not stop:
            wanted = (
                [v for v in verdicts if v.blocks]
                if blocked
                else [v for v in verdicts if v.decision == decision and decision is not None]
            )
        reason = "\n".join(v.reason for v in wanted if v.reason)
        context = "\n\n".join(v.context for v in verdicts if v.context)
        return cls(blocked=blocked, reason=reason, context=context, decision=decision, stop=stop)


@dataclass(frozen=True)
class Asker:
    """Who is asking: the role, the job (a sub-agent's), the turn and the tool call."""

    role: str = "direct"
    job_id: str | None = None
    turn_id: str | None = None
    call_id: str | None = None
    cancel: CancelToken | None = None


@dataclass
class Hooks:
    """The hooks one session runs (the user's, and a trusted repository's)."""

    hooks: Sequence[ConfiguredHook]
    session_id: str
    emit: Callable[[ev.Event], None]
    cwd: Path
    project_dir: Path | None = None
    permission_mode: Callable[[], str] | None = None
    _started: bool = False
    _session_context: str = ""
    _background: set[asyncio.Task[Any]] = field(default_factory=set, repr=False)

    @classmethod
    def build(
        cls,
        user: Mapping[str, Sequence[HookEntry]],
        project: ProjectHooks | None,
        **kwargs: Any,
    ) -> Hooks:
        """The session's hooks: ``user``'s (the config's ``hooks``) and, when given (the
        caller checked it is trusted), ``project``'s."""
        hooks = [
            ConfiguredHook(event, entry, "user")
            for event, entries in user.items()
            for entry in entries
        ]
        if project is not None:
            hooks.extend(
                ConfiguredHook(event, entry, "project")
                for event, entries in project.hooks.items()
                for entry in entries
            )
        return cls(hooks, **kwargs)

    def has(self, event: str) -> bool:
        """Whether any hook is configured for ``event``."""
        return any(hook.event == event for hook in self.hooks)

    # -- running --------------------------------------------------------------------------
    async def run(
        self,
        event: str,
        fields: Mapping[str, Any],
        asker: Asker | None = None,
        *,
        subject: str | None = None,
        tool: str | None = None,
    ) -> HookAnswer:
        """Run the hooks of ``event`` whose matcher takes ``subject``; their joint answer."""
        asker = asker or Asker()
        chosen = [h for h in self.hooks if h.event == event and h.matches(subject)]
        if not chosen:
            return HookAnswer()
        payload = json.dumps(self._payload(event, fields, asker), default=str).encode()
        verdicts = await asyncio.gather(
            *(self._run_one(hook, payload, asker, tool) for hook in chosen)
        )
        return HookAnswer.combine(verdicts)

    def _payload(self, event: str, fields: Mapping[str, Any], asker: Asker) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": None,
            "cwd": str(self.cwd),
            "hook_event_name": event,
            "smith_role": asker.role,
        }
        if self.permission_mode is not None:
            payload["permission_mode"] = self.permission_mode()
        if asker.job_id is not None:
            payload["agent_id"] = asker.job_id
            payload["agent_type"] = asker.role
        payload.update(fields)
        return payload

    async def _run_one(
        self, hook: ConfiguredHook, payload: bytes, asker: Asker, tool: str | None
    ) -> HookVerdict:
        run = await run_hook_command(
            hook.entry.command,
            payload,
            cwd=self.project_dir or self.cwd,
            timeout_s=hook.entry.timeout_s,
            cancel=asker.cancel,
            env=hook_environment(self.project_dir),
        )
        verdict = read_verdict(hook.event, run, hook.entry.command)
        message = (verdict.reason or verdict.notice or verdict.context).strip()
        if len(message) > 400:
            message = message[:400] + " […]"
        if run.truncated:
            message = (message + " " if message else "") + "(output over 1 MB was dropped)"
        self.emit(
            ev.HookRun(
                event=hook.event,
                command=hook.entry.command,
                outcome=verdict.outcome,
                source=hook.source,
                exit_code=run.exit_code,
                duration_s=round(run.duration_s, 3),
                message=message,
                turn_id=asker.turn_id,
                call_id=asker.call_id,
                tool=tool,
                role=asker.role,
                job_id=asker.job_id,
            )
        )
        return verdict

    # -- the events -----------------------------------------------------------------------
    async def session_start(self, source: str = "startup") -> None:
        """``SessionStart`` (once): its context waits for the first turn."""
        if self._started:
            return
        self._started = True
        answer = await self.run("SessionStart", {"source": source}, subject=source)
        self._session_context = answer.context

    def take_session_context(self) -> str:
        """The ``SessionStart`` context, once (the first turn adds it to its prompt)."""
        context, self._session_context = self._session_context, ""
        return context

    async def prompt_submitted(self, prompt: str, asker: Asker) -> HookAnswer:
        """``UserPromptSubmit`` (after ``SessionStart`` ran once); ``context`` includes the
        session's."""
        await self.session_start()
        answer = await self.run("UserPromptSubmit", {"prompt": prompt}, asker)
        session = self.take_session_context()
        if session:
            context = f"{session}\n\n{answer.context}" if answer.context else session
            answer = HookAnswer(
                answer.blocked, answer.reason, context, answer.decision, answer.stop
            )
        return answer

    async def before_tool(self, name: str, tool_input: Any, asker: Asker) -> HookAnswer:
        """``PreToolUse``: ``decision`` deny (or ``blocked``) refuses the call, allow skips
        the question (never a deny rule), ask asks even where the rules allow."""
        fields = self._tool_fields(name, tool_input, asker)
        return await self.run("PreToolUse", fields, asker, subject=name, tool=name)

    async def after_tool(
        self, name: str, tool_input: Any, response: Mapping[str, Any], asker: Asker
    ) -> HookAnswer:
        """``PostToolUse``: a block's reason (and any context) goes to the model with the result."""
        fields = {**self._tool_fields(name, tool_input, asker), "tool_response": dict(response)}
        return await self.run("PostToolUse", fields, asker, subject=name, tool=name)

    async def permission_request(self, name: str, tool_input: Any, asker: Asker) -> HookAnswer:
        """``PermissionRequest``: a call is about to ask; allow or deny answers for the user."""
        fields = self._tool_fields(name, tool_input, asker)
        return await self.run("PermissionRequest", fields, asker, subject=name, tool=name)

    def _tool_fields(self, name: str, tool_input: Any, asker: Asker) -> dict[str, Any]:
        """A call as Claude Code's hooks see one (``claude_names``), Smith's name beside."""
        return {
            "tool_name": claude_name(name),
            "smith_tool_name": name,
            "tool_input": claude_input(name, tool_input, str(self.cwd)),
            "tool_use_id": asker.call_id,
        }

    async def stopping(self, last_text: str, active: bool, asker: Asker) -> HookAnswer:
        """``Stop`` (a top-level turn) or ``SubagentStop`` (``asker.job_id`` set): ``blocked``
        keeps the model going with ``reason``."""
        event = "Stop" if asker.job_id is None else "SubagentStop"
        fields = {"stop_hook_active": active, "last_assistant_message": last_text}
        return await self.run(event, fields, asker, subject=asker.role if asker.job_id else None)

    async def subagent_start(self, task: str, asker: Asker) -> HookAnswer:
        """``SubagentStart``: ``context`` goes to the sub-agent with its task."""
        return await self.run("SubagentStart", {"prompt": task}, asker, subject=asker.role)

    async def pre_compact(self, trigger: str, instructions: str | None, asker: Asker) -> HookAnswer:
        """``PreCompact`` (``trigger``: ``manual`` or ``auto``); ``blocked`` skips it."""
        subject = "manual" if trigger == "manual" else "auto"
        fields = {"trigger": subject, "custom_instructions": instructions or ""}
        return await self.run("PreCompact", fields, asker, subject=subject)

    def notify(self, message: str, kind: str, asker: Asker | None = None) -> None:
        """``Notification``, in the background (a question waits for no hook)."""
        if not self.has("Notification"):
            return
        fields = {"message": message, "notification_type": kind, "title": "Smith"}
        try:
            task = asyncio.get_running_loop().create_task(
                self.run("Notification", fields, asker, subject=kind)
            )
        except RuntimeError:
            return
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def session_end(self, reason: str) -> None:
        """``SessionEnd``; the ``Notification`` hooks still running are awaited first."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        await self.run("SessionEnd", {"reason": reason}, subject=reason)


def tool_response(
    content: str, ok: bool, error: str | None, metadata: Mapping[str, Any]
) -> dict[str, Any]:
    """A tool result as ``PostToolUse``'s ``tool_response``."""
    response: dict[str, Any] = {"content": content, "success": ok}
    if error is not None:
        response["error"] = error
    exit_code = metadata.get("exit_code")
    if isinstance(exit_code, int):
        response["exit_code"] = exit_code
    return response
