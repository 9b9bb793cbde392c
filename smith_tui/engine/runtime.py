"""The runtime: session lifecycle, conversations, turns and the event stream.

Front ends create one :class:`Runtime` (``Runtime.open``), subscribe to its
events and hand it raw input lines. Lines starting with ``/`` go to the
command service; everything else runs a turn of the active role.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from smith_tui.cancel import CancelToken
from smith_tui.config import (
    ConfigError,
    EffectiveConfig,
    LoadOptions,
    load_effective_config,
    server_configured,
)
from smith_tui.dispatch.job import DispatchJob
from smith_tui.dispatch.report_tool import REPORT_TOOL
from smith_tui.dispatch.service import DispatchService
from smith_tui.engine import events as ev
from smith_tui.engine.errors import AgentError, AgentFailure, normalize
from smith_tui.engine.model_select import ModelSelection, ModelSelectionError
from smith_tui.engine.persistence import Persistence, message_dict
from smith_tui.engine.prompt import build_state_snapshot, build_system_prompt
from smith_tui.engine.roles import RoleSpec, UnknownRoleError, resolve_role
from smith_tui.engine.scope import TurnScope, compute_scope
from smith_tui.engine.services import Services, compose_services, default_factories
from smith_tui.engine.turn import TurnDeps, TurnResult, TurnSetup, run_turn
from smith_tui.engine.usage import UsageTracker
from smith_tui.engine.window import apply_window
from smith_tui.store import Store, discover_project

OVERRIDES_KEY = "runtime_overrides"
CHILD_STEP_BUDGET = 40
CHILD_REPEAT_LIMIT = 3


@dataclass
class RuntimeOptions:
    """How a runtime is opened (the CLI flags, mostly)."""

    cwd: Path = field(default_factory=Path.cwd)
    config_path: str | None = None
    db_path: str | None = None
    ephemeral: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    """``--model``: the explicit model of every top-level request (selection step 1)."""
    auto_resume: bool = False
    """Resume the project's active conversation on first use (the app; not headless runs)."""


@dataclass
class SessionState:
    """Session status (created, running, stopped, failed) with timestamps."""

    status: str = "created"
    started_at: float | None = None
    stopped_at: float | None = None
    stop_reason: str | None = None
    error: AgentError | None = None


@dataclass(frozen=True)
class ExecutionContext:
    """What a turn observes, fixed when it begins (docs/DESIGN.md §5.2)."""

    session_id: str
    turn_id: str
    active_role: str
    conversation_id: str
    config_snapshot: Mapping[str, Any]
    service_handles: Mapping[str, Any]
    scope: TurnScope


@dataclass
class ActiveTurn:
    """The turn in flight."""

    turn_id: str
    cancel: CancelToken
    context: ExecutionContext
    started_at: float = field(default_factory=time.time)


class RuntimeError_(Exception):
    """A problem the user must fix (bad config, unknown conversation, busy runtime)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _window_for(config: Mapping[str, Any]) -> Callable[..., list[dict[str, Any]]]:
    def window(transcript: list[dict[str, Any]], cfg: Mapping[str, Any], context_window: int):
        cm = cfg.get("context_management") or {}
        return apply_window(
            transcript,
            enabled=bool(cm.get("enabled", True)),
            tool_output_keep_rounds=int(cm.get("tool_output_keep_rounds", 7)),
            tool_output_elide_over_chars=int(cm.get("tool_output_elide_over_chars", 1024)),
            trim_threshold_pct=float(cm.get("trim_threshold_pct", 80)),
            context_window=context_window,
        ).messages

    return window


class Runtime:
    """One agent session: config, store, services, the active conversation and turns."""

    def __init__(
        self,
        config: EffectiveConfig,
        store: Store,
        *,
        options: RuntimeOptions | None = None,
        env: Mapping[str, str] | None = None,
        llm: Any = None,
        handles: Mapping[str, Any] | None = None,
    ) -> None:
        self.options = options or RuntimeOptions()
        self.env = dict(os.environ if env is None else env)
        self.config = config
        self.store = store
        self._llm = llm
        self._llm_injected = llm is not None
        self.session_id = "session-" + secrets.token_hex(4)
        self.session = SessionState()
        self.usage = UsageTracker()
        self.current_turn: ActiveTurn | None = None
        self.next_turn_id = 1
        self.conversation_id: str | None = None
        self.messages: list[dict[str, Any]] = []
        self.last_selection: ModelSelection | None = None
        self.todo: list[dict[str, Any]] = []
        self.jobs: dict[str, Any] = {}
        """Dispatch jobs in flight, by job id (for cancelling one sub-agent)."""
        self._subscribers: list[Callable[[ev.Event], None]] = []
        self._resume_checked = not self.options.auto_resume
        self._active_role_override: str | None = None
        from smith_tui.engine.commands import CommandService

        factories = default_factories(llm=_LazyLLM(self), store=store, env=self.env)
        factories["persistence"] = lambda options: Persistence(store)
        factories["command"] = lambda options: CommandService(self)
        factories["config"] = lambda options: self
        factories["conversation"] = lambda options: self
        factories["prompt"] = lambda options: build_system_prompt
        self.services: Services = compose_services(config.effective, factories, handles)
        self.persistence: Persistence = self.services.persistence
        from smith_tui.dispatch.runner import ChildRunner

        self.dispatch = self.services.dispatch or DispatchService(
            ChildRunner(self).run,
            self.services.role.check_dispatch,
            self.persistence.save_scratchpad,
        )
        registry = self.services.tool
        registry.register(REPORT_TOOL)
        registry.register(self.dispatch.tool())
        self.scope = compute_scope(self.options.cwd, self._index_file(), discover_project)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        options: RuntimeOptions,
        *,
        env: Mapping[str, str] | None = None,
        handles: Mapping[str, Any] | None = None,
        llm: Any = None,
    ) -> Runtime:
        """Open the store, load the layered config and compose the services.

        Raises :class:`ConfigError` or :class:`smith_tui.store.StoreError` with a
        message for the user.
        """
        store = Store.open(options.db_path)
        try:
            persisted = store.config.get(OVERRIDES_KEY) or {}
            config = load_effective_config(
                LoadOptions(
                    config_path=options.config_path,
                    persisted=persisted,
                    ephemeral=options.ephemeral,
                )
            )
        except BaseException:
            store.close()
            raise
        return cls(config, store, options=options, env=env, llm=llm, handles=handles)

    @property
    def llm(self) -> Any:
        """The LLM client, created on first use from ``llm_config``."""
        if self._llm is None:
            if not self.server_configured:
                raise AgentFailure(
                    AgentError(
                        "config",
                        "no_server",
                        "no LLM server is configured: set llm_config.api_url in "
                        f"{self.config.user_config_path}, SMITH_API_URL or --api-url",
                    )
                )
            from smith_tui.llm import LLMClient, LLMConfig

            llm_cfg = self.config.model.llm_config
            self._llm = LLMClient(
                LLMConfig(
                    api_url=str(llm_cfg.api_url),
                    api_key=self.config.api_key(),
                    **llm_cfg.transport_timeouts(),
                )
            )
        return self._llm

    @property
    def server_configured(self) -> bool:
        """Whether an LLM server URL is configured."""
        return self._llm is not None or server_configured(self.config.model)

    def _index_file(self) -> str:
        return str(self.config.effective.get("index_file") or "INDEX.md")

    async def aclose(self) -> None:
        """Stop the session, close the client and the store."""
        if self.session.status == "running":
            self.stop_session("closed")
        if self._llm is not None and hasattr(self._llm, "aclose"):
            await self._llm.aclose()
        self.store.close()

    # -- events ---------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[ev.Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns an unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def emit(self, event: ev.Event) -> None:
        """Deliver ``event`` to every subscriber (a failing subscriber is skipped)."""
        if isinstance(event, ev.ToolCallFinished) and "todo" in event.metadata:
            self.todo = list(event.metadata["todo"])
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:  # a broken front end must not break the turn
                pass
        if isinstance(event, ev.ToolCallFinished) and "todo" in event.metadata:
            self.emit(ev.TodoUpdated(items=self.todo, role=event.role, job_id=event.job_id))

    # -- session lifecycle ----------------------------------------------------------------
    def start_session(self) -> None:
        """Move the session to ``running``."""
        if self.session.status == "running":
            return
        self.session = SessionState(status="running", started_at=time.time())
        self.emit(ev.SessionStarted(session_id=self.session_id, role=self.active_role))
        retention = self.config.model.services.observe.retention_days
        try:
            self.persistence.prune_snapshots(float(retention))
        except Exception:
            pass

    def stop_session(self, reason: str = "stopped") -> None:
        """Stop the session; cancels the active turn."""
        self.cancel_turn(reason)
        self.session.status = "stopped"
        self.session.stopped_at = time.time()
        self.session.stop_reason = reason
        self.emit(
            ev.SessionFinished(
                session_id=self.session_id, status="stopped", reason=reason, role=self.active_role
            )
        )

    def fail_session(self, error: Any) -> None:
        """Mark the session failed; cancels the active turn."""
        normalized = normalize(error)
        self.cancel_turn("session failed")
        self.session.status = "failed"
        self.session.stopped_at = time.time()
        self.session.error = normalized
        self.emit(
            ev.SessionFinished(
                session_id=self.session_id,
                status="failed",
                reason=normalized.message,
                error=normalized.to_dict(),
                role=self.active_role,
            )
        )

    # -- roles, models --------------------------------------------------------------------
    @property
    def active_role(self) -> str:
        """The user-facing role turns run as (``direct`` unless configured)."""
        if self._active_role_override:
            return self._active_role_override
        return str(self.config.effective.get("active_role") or "direct")

    def set_active_role(self, name: str) -> RoleSpec:
        """Switch the user-facing role for the rest of the session."""
        spec = resolve_role(name)
        if not spec.user_facing:
            raise RuntimeError_(
                f"{spec.name} ({spec.alias}) only runs as a dispatched sub-agent; "
                "choose direct or orchestrator"
            )
        self._active_role_override = spec.name
        return spec

    @property
    def model(self) -> str | None:
        """The model of the last request, or the explicit/pinned one."""
        if self.last_selection is not None:
            return self.last_selection.model
        return self.options.model or self.pinned_model

    @property
    def pinned_model(self) -> str | None:
        """The model pinned to the active conversation with ``/model``."""
        if not self.conversation_id:
            return None
        conv = self.store.conversations.get(self.conversation_id)
        return conv.pinned_model if conv else None

    async def catalog(self) -> list[Any]:
        """The server's model catalog (empty when it cannot be read)."""
        try:
            return await self.services.model.catalog()
        except Exception:
            return []

    # -- conversations --------------------------------------------------------------------
    @property
    def project_id(self) -> str:
        """The project of the working directory."""
        return self.scope.project_id or "unknown"

    def _require_idle(self) -> None:
        if self.busy:
            raise RuntimeError_("a turn is running; cancel it first (ctrl+c)")

    def new_conversation(self, title: str | None = None) -> str:
        """Start a fresh conversation and make it active."""
        self._require_idle()
        self.conversation_id = self.store.conversations.create(self.project_id, title)
        self.messages = []
        self.todo = []
        self._resume_checked = True
        self.persistence.set_active_conversation(self.conversation_id, self.project_id)
        self.emit(
            ev.ConversationChanged(
                conversation_id=self.conversation_id, reason="new", role=self.active_role
            )
        )
        return self.conversation_id

    def load_conversation(self, conversation_id: str, reason: str = "load") -> str:
        """Make an existing conversation active (repairing orphaned tool calls once)."""
        self._require_idle()
        conv = self.store.conversations.get(conversation_id)
        if conv is None:
            matches = [
                c.id
                for c in self.store.conversations.list_all(limit=500)
                if c.id.startswith(conversation_id)
            ]
            if len(matches) != 1:
                raise RuntimeError_(
                    f"no conversation with id {conversation_id!r}; /history lists them"
                )
            conv = self.store.conversations.get(matches[0])
            assert conv is not None
        self.store.conversations.repair_orphan_tool_calls(conv.id)
        self.conversation_id = conv.id
        self._resume_checked = True
        self.reload_conversation()
        # Under the conversation's own project: resuming project A's conversation while in
        # project B must not make a restart in B reopen it.
        self.persistence.set_active_conversation(conv.id, conv.project_id)
        self.emit(
            ev.ConversationChanged(conversation_id=conv.id, reason=reason, role=self.active_role)
        )
        return conv.id

    def reload_conversation(self) -> None:
        """Rebuild the live transcript from the store (after edits in the inspect view)."""
        if self.conversation_id is None:
            self.messages = []
            return
        stored = self.store.conversations.list_messages(self.conversation_id)
        self.messages = [message_dict(m) for m in stored]
        from smith_tui.tools import todo as todo_tool

        self.todo = todo_tool.load_todo(self.store, self.conversation_id)

    def clear_conversation(self) -> str:
        """``/clear``: leave the current transcript behind and start empty."""
        return self.new_conversation()

    def continue_latest(self) -> str | None:
        """``--continue``: load the most recent conversation of this project."""
        conv = self.store.conversations.most_recent(self.project_id)
        if conv is None:
            return None
        return self.load_conversation(conv.id, reason="continue")

    def ensure_conversation(self) -> str:
        """Return the active conversation, resuming or creating one on first use."""
        if self.conversation_id is not None:
            return self.conversation_id
        if not self._resume_checked:
            self._resume_checked = True
            active = self.persistence.active_conversation(self.project_id)
            conv = self.store.conversations.get(active) if active else None
            if conv is not None and conv.project_id == self.project_id:
                return self.load_conversation(conv.id, reason="resume")
        return self.new_conversation()

    # -- turns ----------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self.current_turn is not None

    def cancel_turn(self, reason: str = "cancelled by user") -> bool:
        """Cancel the active turn (cascades to tools and sub-agents)."""
        if self.current_turn is None:
            return False
        self.current_turn.cancel.cancel(reason)
        return True

    def cancel_job(self, job_id: str, reason: str = "cancelled by user") -> bool:
        """Cancel one dispatched sub-agent (and anything it started); the parent goes on."""
        job = self.jobs.get(job_id)
        if job is None:
            return False
        job.cancel.cancel(reason)
        return True

    def compute_scope(self) -> TurnScope:
        """Discover the project and read its index file (blocking: git runs, a file is read)."""
        return compute_scope(self.options.cwd, self._index_file(), discover_project)

    def begin_turn(self, role: str | None = None, *, scope: TurnScope | None = None) -> ActiveTurn:
        """Mint a turn id and cancel token and freeze the execution context.

        ``scope`` is the turn's scope when the caller computed it already (off
        the event loop); otherwise it is computed here.
        """
        if self.current_turn is not None:
            raise RuntimeError_("a turn is already running; wait for it or cancel it (ctrl+c)")
        if self.session.status != "running":
            self.start_session()
        conversation_id = self.ensure_conversation()
        self.scope = scope if scope is not None else self.compute_scope()
        turn_id = f"{self.session_id[8:]}-t{self.next_turn_id}-{secrets.token_hex(2)}"
        self.next_turn_id += 1
        context = ExecutionContext(
            session_id=self.session_id,
            turn_id=turn_id,
            active_role=role or self.active_role,
            conversation_id=conversation_id,
            config_snapshot=self.config.effective,
            service_handles=self.services.as_mapping(),
            scope=self.scope,
        )
        self.current_turn = ActiveTurn(turn_id, CancelToken.new_root(), context)
        return self.current_turn

    def finish_turn(self) -> None:
        """Clear the active turn."""
        self.current_turn = None

    async def submit(self, line: str) -> Any:
        """Route one raw input line."""
        text = line.strip()
        if text.startswith("/"):
            return await self.services.command.run(text)
        if not text:
            return None
        return await self.run_turn(text)

    process_raw_input = submit

    async def run_turn(
        self, prompt: str, *, model: str | None = None, role: str | None = None
    ) -> TurnResult:
        """Run one top-level turn for ``prompt`` and return how it ended."""
        role_name = role or self.active_role
        try:
            role_spec = resolve_role(role_name)
        except UnknownRoleError as exc:
            raise RuntimeError_(str(exc)) from None
        # git discovery and the index file read stay off the event loop
        scope = await asyncio.to_thread(self.compute_scope)
        active = self.begin_turn(role_spec.name, scope=scope)
        ctx = active.context
        self.emit(
            ev.TurnStarted(
                turn_id=active.turn_id,
                conversation_id=ctx.conversation_id,
                prompt=prompt,
                role=role_spec.name,
            )
        )
        result: TurnResult | None = None
        try:
            result = await self._with_turn(active, role_spec, prompt, model)
        finally:
            if result is None:
                result = TurnResult("cancelled", error=normalize("cancelled"))
            self._close_turn(active, role_spec.name, prompt, result)
        return result

    async def _with_turn(
        self, active: ActiveTurn, role_spec: RoleSpec, prompt: str, model: str | None
    ) -> TurnResult:
        ctx = active.context
        try:
            from smith_tui.tools import todo as todo_tool

            todo_tool.clear_todo(self.store, ctx.conversation_id)
            if self.todo:
                self.todo = []
                self.emit(ev.TodoUpdated(items=[], role=role_spec.name))
            self.persistence.start_turn(ctx.conversation_id, role_spec.name, active.turn_id)
            selection = await self.services.model.select(
                model or self.options.model, self.pinned_model, role_spec, ctx.config_snapshot
            )
            self.last_selection = selection
            setup = self.setup_for(active, role_spec, selection)
            user = {"role": "user", "content": prompt}
            result = await run_turn(setup, list(self.messages), user, self.deps())
        except ModelSelectionError as exc:
            self.emit(ev.StatusChanged(status="error", detail=str(exc), role=role_spec.name))
            return TurnResult("error", error=AgentError("config", "no_model", str(exc)))
        except AgentFailure as exc:
            self.emit(
                ev.StatusChanged(status="error", detail=exc.error.message, role=role_spec.name)
            )
            return TurnResult("error", error=exc.error)
        except Exception as exc:  # with_turn: normalise anything thrown
            error = normalize(exc)
            self.emit(ev.StatusChanged(status="error", detail=error.message, role=role_spec.name))
            return TurnResult("error", error=error)
        return result

    def _close_turn(self, active: ActiveTurn, role: str, prompt: str, result: TurnResult) -> None:
        ctx = active.context
        if result.stop_reason != "completed":
            # A turn torn down while a tool ran (its task cancelled, an unexpected error)
            # left the call on record without a result: answer it so the next request is valid.
            try:
                self.store.conversations.repair_orphan_tool_calls(ctx.conversation_id)
            except Exception:
                pass
        self.reload_conversation()
        error = result.error.to_dict() if result.error else None
        try:
            self.persistence.finish_turn(
                ctx.conversation_id,
                active.turn_id,
                result.stop_reason,
                error,
                {
                    "turn_id": active.turn_id,
                    "role": role,
                    "prompt": prompt,
                    "model": self.last_selection.model if self.last_selection else None,
                    "stop_reason": result.stop_reason,
                    "error": error,
                    "rounds": result.rounds,
                    "usage": result.usage,
                    "started_at": active.started_at,
                },
            )
        except Exception:
            pass
        self.finish_turn()
        self.emit(
            ev.TurnFinished(
                turn_id=active.turn_id,
                conversation_id=ctx.conversation_id,
                stop_reason=result.stop_reason,  # type: ignore[arg-type]
                text=result.text,
                error=error,
                usage=result.usage,
                role=role,
            )
        )

    def setup_for(
        self,
        active: ActiveTurn,
        role_spec: RoleSpec,
        selection: ModelSelection,
        *,
        job: DispatchJob | None = None,
        conversation_id: str | None = None,
        turn_id: str | None = None,
    ) -> TurnSetup:
        ctx = active.context
        config = ctx.config_snapshot
        budget = config.get("tool_step_budget")
        if job is not None:
            dispatch_opts = (config.get("services") or {}).get("dispatch") or {}
            budget = dispatch_opts.get("child_step_budget") or CHILD_STEP_BUDGET
        return TurnSetup(
            turn_id=turn_id or active.turn_id,
            conversation_id=conversation_id or ctx.conversation_id,
            role=role_spec.name,
            model=selection.model,
            system_prompt=build_system_prompt(role_spec, ctx.scope),
            config=config,
            cancel=job.cancel if job is not None else active.cancel,
            cwd=ctx.scope.cwd,
            context_window=selection.context_window,
            max_output_tokens=selection.max_output_tokens,
            job_id=job.job_id if job is not None else None,
            project_id=ctx.scope.project_id,
            project_root=ctx.scope.project_root,
            services=MappingProxyType({"store": self.store, "runtime_session": self.session_id}),
            step_budget=int(budget) if budget else None,
            repeat_limit=CHILD_REPEAT_LIMIT if job is not None else None,
            usage_scope=(ctx.conversation_id, active.turn_id) if job is not None else None,
        )

    def deps(self) -> TurnDeps:
        """The collaborators of the tool loop for this runtime."""
        return TurnDeps(
            llm=self.llm,
            registry=self.services.tool,
            emit=self.emit,
            recorder=self.persistence,
            usage=self.usage,
            window=_window_for(self.config.effective),
            now=lambda: datetime.now().astimezone(),
            snapshot=build_state_snapshot,
        )

    # -- configuration --------------------------------------------------------------------
    def reload_config(self) -> None:
        """Reload the layered config (after ``/config set`` or an edit in the config screen)."""
        persisted = self.store.config.get(OVERRIDES_KEY) or {}
        self.config = load_effective_config(
            LoadOptions(
                config_path=self.options.config_path,
                persisted=persisted,
                ephemeral=self.options.ephemeral,
            )
        )
        if not self._llm_injected:
            self._llm = None  # rebuilt from the new llm_config on next use

    def set_config(self, path: str, raw_value: str) -> Any:
        """``/config set``: validate then persist one override; returns the stored value."""
        from smith_tui.config import get_value, set_override

        patch = self.store.config.get(OVERRIDES_KEY) or {}
        new_patch = set_override(patch, path, raw_value)
        try:
            load_effective_config(
                LoadOptions(
                    config_path=self.options.config_path,
                    persisted=new_patch,
                    ephemeral=self.options.ephemeral,
                )
            )
        except ConfigError as exc:
            raise RuntimeError_(exc.message) from None
        self.store.config.set(OVERRIDES_KEY, new_patch)
        self.reload_config()
        return get_value(self.config, path)

    def unset_config(self, path: str) -> None:
        """``/config unset``: remove one override (pruning empty parents)."""
        from smith_tui.config import unset_override

        patch = self.store.config.get(OVERRIDES_KEY) or {}
        self.store.config.set(OVERRIDES_KEY, unset_override(patch, path))
        self.reload_config()


class _LazyLLM:
    """Defers creating the LLM client until the model service first needs it."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def list_models(self, *, refresh: bool = False) -> list[Any]:
        return await self._runtime.llm.list_models(refresh=refresh)
