"""One ACP session: a Smith runtime on one conversation, seen through the client.

Engine events become session updates, sent in order by one sender task; the permission
port asks the client (``session/request_permission``); the client's ``fs/*`` methods are
the tools' file backend and its ``terminal/*`` methods run ``bash`` when it offers them. The ACP session id is the conversation id,
so ``smith --resume <id>`` continues a session started in an editor and vice versa.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.helpers import update_current_mode
from acp.schema import (
    ConfigOptionUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    SessionMode,
    SessionModeState,
    TerminalToolCallContent,
    ToolCallUpdate,
)

from smith_tui.acp import dispatch_card, options, permission_content, replay, updates, wire
from smith_tui.acp.editor_files import EditorFiles
from smith_tui.acp.session_record import remember_mode
from smith_tui.acp.terminals import EditorTerminals
from smith_tui.config.permission_settings import MODE_TEXT, PERMISSION_MODES
from smith_tui.engine import events as ev
from smith_tui.engine.permission_gate import PermissionReply, PermissionRequest

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

log = logging.getLogger(__name__)

SNAPSHOT_LIMIT = 2 * 1024 * 1024
"""Largest file whose before/after text is shown as a diff."""
ALLOW_ONCE, ALLOW_SESSION, REJECT = "allow_once", "allow_session", "reject"


@dataclass(frozen=True)
class _Notification:
    """An extension notification waiting in the send queue."""

    method: str
    params: dict[str, Any]


@dataclass
class _Call:
    """A tool call shown in the editor."""

    acp_id: str
    name: str
    job_id: str | None
    before: str | None = None
    path: Path | None = None
    output: str = ""
    terminal_id: str | None = None
    """The editor's terminal running the call's command (it shows the output)."""
    command: str = ""
    """A ``bash`` call's command: the title of the editor's terminal running it."""


@dataclass
class _Job:
    """A dispatched sub-agent, shown as its ``dispatch`` tool call."""

    acp_id: str
    role: str
    task: str
    log: list[str] = field(default_factory=list)
    job_id: str = ""
    result: dict[str, Any] = field(default_factory=dict)
    """The report, once the job finished (its card then shows it after the log)."""


class AcpSession:
    """A runtime bound to one ACP session and its client connection."""

    def __init__(self, conn: Any, runtime: Runtime, session_id: str, client_caps: Any) -> None:
        self.conn = conn
        self.runtime = runtime
        self.session_id = session_id
        self.loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._sender = asyncio.create_task(self._send_loop(), name=f"acp-updates-{session_id}")
        self._calls: dict[tuple[str | None, str], _Call] = {}
        self._jobs: dict[str, _Job] = {}
        self._cards: dict[str, list[_Job]] = {}
        """Finished jobs by their dispatch call's id, until that call ends."""
        self.models: list[str] = []
        """The server's model ids (``GET /models``), read when the session opens."""
        self.command_running = False
        """A ``/command`` typed in the editor runs: its output is the answer."""
        self.advertised: list[Any] = []
        """The commands last sent as ``available_commands_update``."""
        self._todo_call_ended = False
        """The last top-level call that ended was ``todo``: its plan follows, even empty."""
        self._mode_to_keep: str | None = None
        """A mode switched to before the conversation was stored (kept with its first turn)."""
        self.cwd = Path(runtime.options.cwd)
        fs = getattr(client_caps, "fs", None)
        read = bool(getattr(fs, "read_text_file", False))
        write = bool(getattr(fs, "write_text_file", False))
        if read or write:
            runtime.driver.files = EditorFiles(conn, session_id, self.loop, read=read, write=write)
        if getattr(client_caps, "terminal", False):
            runtime.driver.commands = EditorTerminals(
                conn, session_id, self.loop, self._terminal_created
            )
        runtime.ask_permission = self.ask
        self._unsubscribe = runtime.bus.subscribe(self._on_event)

    # -- modes and options ----------------------------------------------------------------
    def modes(self) -> SessionModeState:
        """The permission modes as the session's modes."""
        return SessionModeState(
            current_mode_id=self.runtime.permission_mode,
            available_modes=[
                SessionMode(id=mode, name=MODE_TEXT[mode][0], description=MODE_TEXT[mode][1])
                for mode in PERMISSION_MODES
            ],
        )

    def config_options(self) -> list[Any]:
        """The role, model and permission mode as select options (smith_tui.acp.options)."""
        return options.config_options(self.runtime, self.models)

    # -- sending --------------------------------------------------------------------------
    def send(self, update: Any) -> None:
        """Queue ``update`` (safe from any thread); updates go out in order."""
        if threading.get_ident() == self._loop_thread:
            self._queue.put_nowait(update)
        else:
            self.loop.call_soon_threadsafe(self._queue.put_nowait, update)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Queue an extension notification behind the updates already queued, so the
        editor reads them in the order they happened (safe from any thread)."""
        self.send(_Notification(method, params))

    async def flush(self) -> None:
        """Wait until every queued update was sent."""
        await self._queue.join()

    async def _send_loop(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                if isinstance(update, _Notification):
                    await self.conn.ext_notification(update.method, update.params)
                else:
                    await wire.session_update(self.conn, self.session_id, update)
            except (BrokenPipeError, ConnectionError):
                # The editor closed its end: nobody is left to tell, and no traceback.
                log.debug("the editor is gone; a session update was not sent")
            except Exception:
                log.exception("sending a session update failed")
            finally:
                self._queue.task_done()

    async def replay(self) -> None:
        """Send the stored conversation as updates (``session/load``) and wait until sent:
        its turns, tool calls and dispatches, plans, typed commands and end marks."""
        for update in await asyncio.to_thread(replay.updates_of, self.runtime, self.cwd):
            self.send(update)
        await self.flush()

    async def aclose(self) -> None:
        """Stop listening, cancel a running turn and close the runtime."""
        self._unsubscribe()
        self.runtime.cancel_turn("the editor closed the session")
        self._sender.cancel()
        await self.runtime.aclose()

    # -- events ---------------------------------------------------------------------------
    def _on_event(self, event: ev.Event) -> None:
        try:
            self._translate(event)
            if isinstance(event, ev.CommandOutput) and event.ok:
                self._command_effects(event)
            if isinstance(event, ev.TurnStarted) and event.job_id is None:
                self._keep_mode()  # the conversation is stored by now
        except Exception:  # a display problem must never break the turn
            log.exception("translating %s failed", event.type)

    def _translate(self, event: ev.Event) -> None:
        top = event.job_id is None
        if isinstance(event, ev.TextDelta) and top:
            self.send(update_agent_message_text(event.text))
        elif isinstance(event, ev.ReasoningDelta) and top:
            self.send(update_agent_thought_text(event.text))
        elif isinstance(event, ev.StreamReset) and top:
            self.send(update_agent_thought_text(f"\n[{event.reason}: the request is retried]\n"))
        elif isinstance(event, ev.ToolCallStarted):
            self._call_started(event)
        elif isinstance(event, ev.ToolOutputDelta):
            self._call_output(event)
        elif isinstance(event, ev.ToolCallFinished):
            self._call_finished(event)
        elif isinstance(event, ev.DispatchStarted):
            self._dispatch_started(event)
        elif isinstance(event, ev.DispatchFinished):
            self._dispatch_finished(event)
        elif isinstance(event, ev.TurnFinished) and not top and event.job_id in self._jobs:
            self._job_log(event.job_id, dispatch_card.turn_ended(event.role, event.stop_reason))
        elif isinstance(event, ev.TodoUpdated) and top:
            if event.items or self._todo_call_ended:  # not the turn's opening clear
                self.send(updates.plan(event.items))
            self._todo_call_ended = False
        elif isinstance(event, ev.PlanPresented) and top:
            # Plan mode's plan: its text as the answer, its steps as the (pending) plan.
            self.send(update_agent_message_text("\n" + event.text))
            steps = event.plan.get("steps") or []
            self.send(updates.plan([{"content": s, "status": "pending"} for s in steps]))
        elif isinstance(event, ev.PermissionMode):
            self.send(update_current_mode(event.mode))
            self._mode_to_keep = event.mode
            self._keep_mode()
        elif isinstance(event, ev.CommandOutput) and self.command_running:
            self.send(update_agent_message_text(event.text.rstrip("\n") + "\n"))
        elif isinstance(event, ev.CommandOutput):  # notices: checkpoints, MCP servers
            self.send(update_agent_thought_text(f"\n[{event.text.rstrip()}]\n"))
        elif isinstance(event, ev.BudgetWarning) and top:
            self.send(update_agent_thought_text(f"\n[budget: {event.message}]\n"))
        elif isinstance(event, ev.HookRun) and event.outcome != "ok":
            why = f": {event.message}" if event.message else ""
            self.send(update_agent_thought_text(f"\n[hook {event.event} {event.outcome}{why}]\n"))
        elif isinstance(event, ev.ContextCompacted) and top:
            self.send(
                update_agent_thought_text(
                    f"\n[context compacted: {event.summarised} older messages summarised]\n"
                )
            )

    def _keep_mode(self) -> None:
        if self._mode_to_keep and remember_mode(self.runtime, self._mode_to_keep):
            self._mode_to_keep = None

    def _command_effects(self, event: ev.CommandOutput) -> None:
        """A role switched by ``/role`` (or routing) shows in the editor's role selector."""
        if event.command == "/role" and "role" in event.data:
            self.send(
                ConfigOptionUpdate(
                    session_update="config_option_update", config_options=self.config_options()
                )
            )

    def _acp_id(self, job_id: str | None, call_id: str) -> str:
        # Children number their calls on their own: the job id keeps them apart.
        return f"{job_id}/{call_id}" if job_id else call_id

    def _call_started(self, event: ev.ToolCallStarted) -> None:
        args = updates.parse_arguments(event.arguments)
        call = _Call(self._acp_id(event.job_id, event.call_id), event.name, event.job_id)
        self._calls[(event.job_id, event.call_id)] = call
        if event.name == "bash" and isinstance(args.get("command"), str):
            call.command = args["command"].strip()
        if event.name in ("edit", "write"):
            call.path = updates.file_path(event.name, args, self.cwd)
            call.before = _snapshot(call.path)
        who = event.role if event.job_id else ""
        meta = None
        job = self._jobs.get(event.job_id or "")
        if job is not None:
            meta = {"smith": {"job_id": event.job_id, "role": event.role, "parent": job.acp_id}}
            self._job_log(event.job_id, f"→ {updates.tool_title(event.name, args)}")
        update = start_tool_call(
            call.acp_id,
            updates.tool_title(event.name, args, who),
            kind=updates.tool_kind(event.name),
            status="in_progress",
            locations=updates.locations(event.name, args, self.cwd),
            raw_input=args,
        )
        update.field_meta = meta
        self.send(update)

    def _terminal_created(self, job_id: str | None, call_id: str | None, terminal_id: str) -> None:
        """The call's command runs in the editor's terminal ``terminal_id``: embed it."""
        call = self._calls.get((job_id, call_id or ""))
        if call is None:
            return
        call.terminal_id = terminal_id
        self.send(update_tool_call(call.acp_id, content=[tool_terminal_ref(terminal_id)]))
        if call.command:  # Zed names an embedded terminal after its call's title from now on
            self.send(update_tool_call(call.acp_id, title=call.command))

    def _call_output(self, event: ev.ToolOutputDelta) -> None:
        call = self._calls.get((event.job_id, event.call_id))
        if call is None or call.terminal_id is not None:  # the terminal shows it
            return
        call.output = updates.clip(call.output + event.text)
        self.send(update_tool_call(call.acp_id, content=updates.text_content(call.output)))

    def _call_finished(self, event: ev.ToolCallFinished) -> None:
        call = self._calls.pop((event.job_id, event.call_id), None)
        if call is None:
            return
        content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent]
        content = []
        if event.ok and call.path is not None:
            new = event.metadata.get("new_text")
            old = event.metadata.get("old_text", call.before)
            if not isinstance(new, str):
                new = _snapshot(call.path)
            if isinstance(new, str):
                content.append(tool_diff_content(str(call.path), new, old))
        text = event.content or event.error or event.summary
        if call.terminal_id is not None:  # the terminal shows the output; the rest is said here
            content.append(tool_terminal_ref(call.terminal_id))
            text = text.split("\n--- output", 1)[0]
        if event.cancelled:
            text = "cancelled" + (f": {text}" if text else "")
        cards = self._cards.pop(call.acp_id, None) if event.name == "dispatch" else None
        if cards:  # the step log and the report for people, not the report's JSON
            text = "\n\n".join(dispatch_card.card_text(j.log, j.role, j.result) for j in cards)
        content.extend(updates.text_content(text))
        self.send(
            update_tool_call(
                call.acp_id,
                status="completed" if event.ok else "failed",
                content=content,
                raw_output={"summary": event.summary, "error": event.error},
            )
        )
        if event.job_id in self._jobs:
            self._job_log(
                event.job_id, dispatch_card.step_done(event.name, event.ok, event.summary)
            )
        if event.job_id is None:
            self._todo_call_ended = event.name == "todo"

    def _dispatch_started(self, event: ev.DispatchStarted) -> None:
        if event.job_id is None:
            return
        parent = self._calls.get((event.parent_job_id, event.call_id or ""))
        acp_id = parent.acp_id if parent else self._acp_id(event.parent_job_id, event.job_id)
        job = _Job(acp_id, event.target_role, event.task, job_id=event.job_id)
        self._jobs[event.job_id] = job
        update = update_tool_call(
            acp_id,
            title=updates.tool_title(
                "dispatch", {"target_role": event.target_role, "task": event.task}
            ),
            status="in_progress",
        )
        update.field_meta = {"smith": {"job_id": event.job_id, "role": event.target_role}}
        self.send(update)
        self._job_log(event.job_id, dispatch_card.started(event.target_role, event.task))

    def _job_log(self, job_id: str | None, line: str) -> None:
        job = self._jobs.get(job_id or "")
        if job is None:
            return
        job.log.append(line)
        self._show_job(job, "\n".join(job.log))

    def _show_job(self, job: _Job, text: str) -> None:
        update = update_tool_call(
            job.acp_id, content=[tool_content(text_block(updates.clip(text)))]
        )
        update.field_meta = {"smith": {"job_id": job.job_id, "role": job.role}}
        self.send(update)

    def _dispatch_finished(self, event: ev.DispatchFinished) -> None:
        job = self._jobs.get(event.job_id or "")
        if job is None:
            return
        job.result = {"status": event.status, "summary": event.summary, **event.result}
        self._show_job(job, dispatch_card.card_text(job.log, job.role, job.result))
        self._cards.setdefault(job.acp_id, []).append(job)
        update = update_tool_call(job.acp_id, status="completed" if event.status == "ok" else None)
        update.field_meta = {
            "smith": {"job_id": event.job_id, "role": job.role, "status": event.status}
        }
        self.send(update)
        self._jobs.pop(event.job_id or "", None)

    # -- permissions ----------------------------------------------------------------------
    async def ask(self, request: PermissionRequest) -> PermissionReply:
        """The permission port: ask the client with allow once / allow for the session /
        reject; a cancelled question is a refusal."""
        await self.flush()  # the client knows the tool call before it is asked about it
        call = self._waiting_call(request.tool, request.job_id)
        who = request.role if request.job_id else ""
        path = updates.file_path(request.tool, dict(request.arguments), self.cwd)
        old = await asyncio.to_thread(_snapshot, path)
        tool_call = ToolCallUpdate(
            tool_call_id=call.acp_id if call else f"ask-{request.tool}",
            title=updates.tool_title(request.tool, dict(request.arguments), who),
            kind=updates.tool_kind(request.tool),
            status="pending",
            content=permission_content.content(request, self.cwd, old),
            raw_input=dict(request.arguments),
        )
        options = [
            PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
            PermissionOption(
                option_id=ALLOW_SESSION,
                name=f"Allow {request.grant} for this session",
                kind="allow_always",
            ),
            PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
        ]
        response = await wire.request_permission(self.conn, self.session_id, tool_call, options)
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
        if chosen == ALLOW_ONCE:
            return PermissionReply("once")
        if chosen == ALLOW_SESSION:
            return PermissionReply("session")
        if chosen == REJECT:
            return PermissionReply("deny")
        return PermissionReply("deny", "the question was dismissed in the editor")

    def _waiting_call(self, tool: str, job_id: str | None) -> _Call | None:
        """The newest running call of ``tool`` in ``job_id`` (the one being asked about)."""
        found = None
        for (job, _), call in self._calls.items():
            if job == job_id and call.name == tool:
                found = call
        return found


def _snapshot(path: Path | None) -> str | None:
    """The text of ``path`` for a diff (``None``: missing, too big or not text)."""
    if path is None:
        return None
    try:
        if not path.is_file() or path.stat().st_size > SNAPSHOT_LIMIT:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
