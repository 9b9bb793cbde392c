"""The runtime: session lifecycle, conversations, turns and the event stream.

Front ends create one :class:`Runtime` (``Runtime.open``), subscribe to its
events and hand it raw input lines. Lines starting with ``/`` go to the
command service; everything else runs a turn of the active role.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smith_tui.cancel import CancelToken
from smith_tui.config import EffectiveConfig, server_configured
from smith_tui.config.front_matter import CACHE_FILE_NAME, MetaCache
from smith_tui.config.loader import LoadOptions, load_effective_config
from smith_tui.config.locations import config_dir, data_dir, home_dir
from smith_tui.config.permission_settings import PERMISSION_MODES
from smith_tui.dispatch.dispatch_tool import DispatchService
from smith_tui.dispatch.job import DispatchJob
from smith_tui.dispatch.job_runner import ChildRunner
from smith_tui.dispatch.report_tool import REPORT_TOOL
from smith_tui.dispatch.worktree_tool import drop_worker, merge_worker, worktree_tool
from smith_tui.engine import events as ev
from smith_tui.engine import routing
from smith_tui.engine.active_conversation import Conversations
from smith_tui.engine.bus import EventBus
from smith_tui.engine.compaction import (
    MANUAL_KEEP_TURNS,
    CompactionRecord,
    build_compactor,
    measured_context,
)
from smith_tui.engine.errors import AgentError, AgentFailure, UserRequestError, normalize
from smith_tui.engine.hooks import TrustStore, default_trust_path
from smith_tui.engine.hooks.hook_set import Hooks
from smith_tui.engine.hooks.session_hooks import SessionHooks
from smith_tui.engine.model_select import ModelSelection
from smith_tui.engine.permission_gate import AskPort, PermissionGate, SessionGrants
from smith_tui.engine.persistence import Persistence
from smith_tui.engine.plans import Planner
from smith_tui.engine.prompt import build_system_prompt
from smith_tui.engine.retry import RetryPolicy
from smith_tui.engine.roles import RoleSpec, UnknownRoleError, child_role_names, resolve_role
from smith_tui.engine.runtime_config import OVERRIDES_KEY, ConfigOverrides
from smith_tui.engine.sandbox_status import SandboxReporter
from smith_tui.engine.scope import TurnScope, compute_scope
from smith_tui.engine.services import ServiceHandles, compose_services, default_factories
from smith_tui.engine.setup_commands import SETUP_NOTICE
from smith_tui.engine.turn import Turn, TurnDriver, TurnResult, TurnServices
from smith_tui.engine.turn_control import State as TurnState
from smith_tui.engine.turn_control import TurnControl
from smith_tui.engine.usage_ledger import UsageTracker
from smith_tui.engine.user_setup import SetupCatalog
from smith_tui.engine.window import WindowSettings
from smith_tui.engine.worker_trees import close_worker_trees, open_worker_trees
from smith_tui.store import Store, discover_project
from smith_tui.tools.builtin.skill import TOOL as SKILL_TOOL
from smith_tui.tools.spec import ToolError

if TYPE_CHECKING:
    from smith_tui.llm import LLMClient
    from smith_tui.mcp.manager import McpManager

__all__ = [
    "OVERRIDES_KEY",
    "Runtime",
    "RuntimeOptions",
    "SessionState",
    "UserRequestError",
]

log = logging.getLogger(__name__)

MCP_NOTICE_COMMAND = "mcp"
"""``CommandOutput.command`` of the notice that an MCP server failed or stopped."""


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
    permission_mode: str = "yolo"
    """The permission mode when ``permissions.mode`` is not set (the app: ``ask``)."""


@dataclass
class SessionState:
    """Session status (created, running, stopped, failed) with timestamps."""

    status: str = "created"
    started_at: float | None = None
    stopped_at: float | None = None
    stop_reason: str | None = None
    error: AgentError | None = None


class Runtime:
    """One agent session: config, store, services, the active conversation and turns.

    Its parts: the event bus (:class:`EventBus`), the active conversation
    (:class:`Conversations`), the config and its saved overrides
    (:class:`ConfigOverrides`) and the turn driver (:class:`TurnDriver`), which runs
    top-level turns here and dispatched children in :class:`ChildRunner`.

    Front ends use the parts themselves: ``conversations`` for the active conversation,
    ``bus`` to subscribe, ``config`` to read the settings. The runtime keeps what spans
    parts (a config change also refreshes the sandbox report, the mode and the LLM client;
    ``emit`` also keeps the conversation's todo list and notices), not methods that only
    forward to one.
    """

    def __init__(
        self,
        store: Store,
        *,
        options: RuntimeOptions | None = None,
        env: Mapping[str, str] | None = None,
        llm: LLMClient | None = None,
        handles: Mapping[str, Any] | None = None,
    ) -> None:
        self.options = options or RuntimeOptions()
        self.env = dict(os.environ if env is None else env)
        self.front_matter = MetaCache(data_dir(self.env) / CACHE_FILE_NAME)
        """What the setup files' front matter parsed to (kept across sessions: no yaml)."""
        self.store = store
        self.overrides = ConfigOverrides(
            store.config, config_path=self.options.config_path, ephemeral=self.options.ephemeral
        )
        self._llm = llm
        self._llm_injected = llm is not None
        self.session_id = "session-" + secrets.token_hex(4)
        self.session = SessionState()
        self.usage = UsageTracker()
        self.current_turn: Turn | None = None
        """The top-level turn in flight (its sub-agents' pause controls are below its own)."""
        self.next_turn_id = 1
        self.last_selection: ModelSelection | None = None
        self.jobs: dict[str, DispatchJob] = {}
        """Dispatch jobs in flight, by job id (for cancelling one sub-agent)."""
        self.bus = EventBus()
        self._active_role_override: str | None = None
        self.sandbox = SandboxReporter(self.emit)
        """Reports whether bash commands run sandboxed (``SandboxStatus`` events)."""
        self.ask_permission: AskPort | None = None
        """How the front end asks the user about a tool call (``None``: it cannot; calls
        that would ask are refused)."""
        self._mode_override: str | None = None
        self._mode_shown: str | None = None

        factories = default_factories(llm=_LazyLLM(self), store=store, env=self.env)
        factories["command"] = self._command_service
        self.services: ServiceHandles = compose_services(self.config.effective, factories, handles)
        self.persistence: Persistence = self.services.persistence
        self.conversations = Conversations(
            store,
            self.persistence,
            emit=self.emit,
            project_id=lambda: self.project_id,
            role=lambda: self.active_role,
            require_idle=self._require_idle,
            # The front end asks for it (plain `smith`); the `auto_resume` setting can refuse.
            auto_resume=self.options.auto_resume and self.config.model.auto_resume,
            restore_role=self._restore_role,
        )
        self.driver = TurnDriver(
            book=self.persistence,
            models=self.services.model,
            session=self.turn_session,
            emit=self.emit,
        )
        self.worktrees = open_worker_trees(store, self.env, self.config.model)
        """The worker worktrees (README, Workers in their own worktrees)."""
        runner = ChildRunner(
            self.driver,
            conversations=store.conversations,
            jobs=self.jobs,
            emit=self.emit,
            worktrees=self.worktrees,
        )
        self.dispatch = DispatchService(
            runner.run, self.services.role.check_dispatch, self.persistence.save_scratchpad
        )
        registry = self.services.tool
        registry.register(REPORT_TOOL)
        registry.register(self.dispatch.tool())
        registry.register(worktree_tool(self.worktrees))
        self.scope = self.compute_scope()
        self.setup = SetupCatalog(
            self.user_config_dir, lambda: home_dir(self.env), self.front_matter
        )
        """The skills and sub-agents from files (discovered off the event loop, on demand)."""
        self.driver.user_setup = self.setup
        self.hook_setup = SessionHooks(
            session_id=self.session_id,
            emit=self.emit,
            trust=TrustStore(default_trust_path(self.env)),
            user_hooks=lambda: self.config.model.hooks,
            permission_mode=lambda: self.permission_mode,
            notify_after_s=lambda: float(self.config.model.notifications.after_s),
        )
        """The session's hooks: the config's, and the repository's once trusted (README, Hooks)."""
        self.bus.subscribe(self.hook_setup.observe)
        self._mcp: McpManager | None = None
        self.plans = Planner(self)
        """Plan mode: the plan presented last, approving (running) or rejecting it."""

    def _command_service(self, options: Mapping[str, Any]) -> Any:
        from smith_tui.engine.slash_commands import CommandService

        return CommandService(self)

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        options: RuntimeOptions,
        *,
        env: Mapping[str, str] | None = None,
        handles: Mapping[str, Any] | None = None,
        llm: LLMClient | None = None,
    ) -> Runtime:
        """Open the store, load the layered config and compose the services.

        Raises :class:`ConfigError` or :class:`smith_tui.store.StoreError` with a
        message for the user.
        """
        # Check the config file and the session's own layers before the store exists, so a
        # bad config never leaves a new, empty database behind.
        load_effective_config(
            LoadOptions(config_path=options.config_path, ephemeral=dict(options.ephemeral))
        )
        store = Store.open(options.db_path)
        try:
            return cls(store, options=options, env=env, llm=llm, handles=handles)
        except BaseException:
            store.close()
            raise

    @property
    def config(self) -> EffectiveConfig:
        """The effective config (reloaded after ``/config set``)."""
        return self.overrides.config

    @property
    def llm(self) -> LLMClient:
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
        return self.config.model.index_file

    @property
    def mcp(self) -> McpManager:
        """The MCP servers of ``mcp_servers``: started with the session, their tools registered.

        Built on first use: the MCP SDK is a large import that a session without servers
        (and every ``smith -p`` run without them) never pays for.
        """
        if self._mcp is None:
            from smith_tui.mcp.manager import McpManager

            self._mcp = McpManager(
                self.services.tool,
                servers=lambda: self.config.model.mcp_servers,
                root=lambda: self.scope.project_root,
                notify=self._mcp_status,
            )
            self.driver.resources = self._mcp  # @server:uri attachments
        return self._mcp

    async def worktree(self, action: str, job_id: str) -> tuple[bool, str]:
        """Merge (``action`` ``merge``) or drop a finished worker's worktree, for the front
        end; returns whether it was done and what to tell the user."""
        act = merge_worker if action == "merge" else drop_worker
        try:
            said = await asyncio.to_thread(act, self.worktrees, job_id, self.scope.project_root)
        except ToolError as exc:
            return False, exc.message
        return True, said

    async def aclose(self) -> None:
        """Stop the session, close the client and the store."""
        if self.session.status == "running":
            await self.hook_setup.session_end("closed")
            self.stop_session("closed")
        if self._mcp is not None:
            await self._mcp.aclose()
        if self._llm is not None and hasattr(self._llm, "aclose"):
            await self._llm.aclose()
        await asyncio.to_thread(close_worker_trees, self.worktrees)
        self.store.close()

    # -- events ---------------------------------------------------------------------------

    def emit(self, event: ev.Event) -> None:
        """Deliver ``event`` on the bus (a finished ``todo`` call is followed by ``TodoUpdated``)."""
        follow = self.conversations.todo_changed(event)
        self.conversations.observe(event)
        self.bus.emit(event)
        if follow is not None:
            self.bus.emit(follow)

    # -- session lifecycle ----------------------------------------------------------------
    def start_session(self) -> None:
        """Move the session to ``running``."""
        if self.session.status == "running":
            return
        self.session = SessionState(status="running", started_at=time.time())
        self.emit(ev.SessionStarted(session_id=self.session_id, role=self.active_role))
        self.sandbox.refresh(self.config.model)
        self._report_mode()
        self.start_mcp()
        retention = self.config.model.services.observe.retention_days
        try:
            self.persistence.prune_snapshots(float(retention))
        except Exception:
            log.exception("pruning old request snapshots failed")

    def start_mcp(self) -> None:
        """Start the MCP servers in the background (once; the app calls it after the first frame)."""
        if self._mcp is None and not self.config.model.mcp_servers:
            return
        self.mcp.start()

    def _mcp_status(self, server: str, status: str, notice: str) -> None:
        if notice:  # a failure, said once: the session goes on without the server
            self.emit(
                ev.CommandOutput(
                    command=MCP_NOTICE_COMMAND,
                    text=notice,
                    ok=False,
                    data={"server": server, "status": status},
                    role=self.active_role,
                )
            )

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
        return self.config.model.role

    def set_active_role(self, name: str) -> RoleSpec:
        """Switch the user-facing role for the rest of the session."""
        spec = resolve_role(name)
        if not spec.user_facing:
            raise UserRequestError(
                f"{spec.name} ({spec.alias}) only runs as a dispatched sub-agent; "
                "choose direct or orchestrator"
            )
        self._active_role_override = spec.name
        self.conversations.remember_role(spec.name)
        return spec

    def _restore_role(self, name: str) -> None:
        """A loaded conversation runs as the role it last ran as, unless ``--role`` says."""
        if "active_role" in self.options.ephemeral:
            return
        try:
            spec = resolve_role(name)
        except UnknownRoleError:  # a role gone since (an agent file removed): keep this one
            return
        if spec.user_facing:
            self._active_role_override = spec.name

    @property
    def model(self) -> str | None:
        """The model the next request uses when it is known: the explicit one (``--model``),
        the one pinned with ``/model``, else the model of the last request (unless that one
        came from a pin since removed); ``None`` when only the next request will tell."""
        explicit = self.options.model or self.conversations.pinned_model
        if explicit:
            return explicit
        selection = self.last_selection
        if selection is not None and selection.source != "pinned":
            return selection.model
        return None

    async def catalog(self) -> list[Any]:
        """The server's model catalog (empty when it cannot be read)."""
        try:
            return await self.services.model.catalog()
        except Exception:
            return []

    # -- permissions ----------------------------------------------------------------------
    @property
    def permission_mode(self) -> str:
        """The mode of the next turn: ``/mode`` for this session, else ``permissions.mode``,
        else the front end's default (``RuntimeOptions.permission_mode``)."""
        if self._mode_override:
            return self._mode_override
        configured = (self.config.effective.get("permissions") or {}).get("mode")
        return str(configured or self.options.permission_mode)

    def set_permission_mode(self, mode: str) -> str:
        """Switch the permission mode for the rest of the session (the next turn on)."""
        if mode not in PERMISSION_MODES:
            raise UserRequestError(
                f"unknown permission mode {mode!r}; choose one of {', '.join(PERMISSION_MODES)}"
            )
        self._mode_override = mode
        self._report_mode()
        return mode

    def cycle_permission_mode(self) -> str:
        """Switch to the next mode, in the order of ``PERMISSION_MODES``, round."""
        index = PERMISSION_MODES.index(self.permission_mode)
        return self.set_permission_mode(PERMISSION_MODES[(index + 1) % len(PERMISSION_MODES)])

    def _report_mode(self) -> None:
        mode = self.permission_mode
        if mode != self._mode_shown:
            self._mode_shown = mode
            self.emit(ev.PermissionMode(mode=mode, role=self.active_role))

    def permission_gate(
        self,
        conversation_id: str,
        config: Mapping[str, Any],
        stop_turn: Callable[[str], None] | None = None,
        *,
        hooks: Hooks | None = None,
    ) -> PermissionGate:
        """The permission gate of a top-level turn (its children share it); ``stop_turn``
        cancels that turn (the user's "deny and stop the turn"); ``hooks``: the turn's
        (PermissionRequest)."""
        gate = PermissionGate.from_config(
            self.permission_mode,
            config,
            conversation_id=conversation_id,
            grants=SessionGrants(self.store.conversations),
            emit=self.emit,
            ask=self.ask_permission,
        )
        gate.stop_turn = stop_turn
        gate.hooks = hooks
        return gate

    # -- conversations --------------------------------------------------------------------
    @property
    def project_id(self) -> str:
        """The project of the working directory."""
        return self.scope.project_id or "unknown"

    def turn_marks(self, turn_ids: list[str]) -> dict[str, Any]:
        """The file-change marks stored with the active conversation's turns ``turn_ids``."""
        from smith_tui.engine.checkpoints import stored_marks

        return stored_marks(self.store, self.conversations.conversation_id, turn_ids)

    def stored_calls(self) -> list[Any]:
        """The tool calls of the active conversation's recent turns and of the sub-agents
        they dispatched, oldest first (the tools pane after a reload)."""
        from smith_tui.engine.stored_calls import stored_calls

        saved = self.conversations.saved
        return list(stored_calls(self.store, self.conversations.conversation_id if saved else None))

    def _require_idle(self) -> None:
        if self.busy:
            raise UserRequestError("a turn is running; cancel it first (ctrl+c)")

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

    def turn_control(self, job_id: str | None = None) -> TurnControl | None:
        """The pause control of the running turn, or of its sub-agent ``job_id``; ``None``
        when that is not running."""
        if job_id is not None:
            job = self.jobs.get(job_id)
            return job.control if job is not None else None
        return self.current_turn.control if self.current_turn is not None else None

    def pause_turn(self, job_id: str | None = None) -> TurnState | None:
        """Pause the running turn (or one sub-agent) at its next round boundary; returns
        its state, or ``None`` when that is not running (engine/turn_control.py)."""
        control = self.turn_control(job_id)
        return control.pause() if control is not None else None

    def step_turn(self, job_id: str | None = None) -> TurnState | None:
        """Let the paused turn (or one sub-agent) run one more round, then hold again."""
        control = self.turn_control(job_id)
        return control.step() if control is not None else None

    def resume_turn(self, job_id: str | None = None) -> TurnState | None:
        """Let the paused turn (or one sub-agent, and what it dispatched) go on."""
        control = self.turn_control(job_id)
        return control.resume() if control is not None else None

    @property
    def paused(self) -> bool:
        """Whether the running turn or any of its sub-agents is paused."""
        if self.current_turn is None:
            return False
        control = self.current_turn.control
        return (control is not None and control.paused) or any(
            job.control.paused for job in self.jobs.values()
        )

    def compute_scope(self) -> TurnScope:
        """Discover the project and read its index file (blocking: git runs, a file is read)."""
        return compute_scope(
            self.options.cwd,
            self._index_file(),
            discover_project,
            user_dir=self.user_config_dir(),
        )

    def begin_turn(self, role: str | None = None, *, scope: TurnScope | None = None) -> Turn:
        """Mint a turn id, a cancel token and a pause control, and freeze what the turn sees
        (its role, scope and config snapshot); the prompt comes with :meth:`run_turn`.

        ``scope`` is the turn's scope when the caller computed it already (off
        the event loop); otherwise it is computed here.
        """
        if self.current_turn is not None:
            raise UserRequestError("a turn is already running; wait for it or cancel it (ctrl+c)")
        if self.session.status != "running":
            self.start_session()
        conversation_id = self.conversations.ensure()
        self.scope = scope if scope is not None else self.compute_scope()
        turn_id = f"{self.session_id[8:]}-t{self.next_turn_id}-{secrets.token_hex(2)}"
        self.next_turn_id += 1
        self.current_turn = Turn(
            turn_id=turn_id,
            conversation_id=conversation_id,
            role=resolve_role(role or self.active_role),
            cancel=CancelToken.new_root(),
            scope=self.scope,
            config=self.config.effective,
            config_model=self.config.model,
            control=TurnControl(),
        )
        return self.current_turn

    def finish_turn(self) -> None:
        """Clear the active turn."""
        self.current_turn = None

    async def submit(self, line: str) -> Any:
        """Route one raw input line: ``/`` commands to the command service (an MCP server's
        prompt, ``/mcp__<server>__<prompt>``, a command file and ``/init`` become the turn's
        prompt), else a turn."""
        text = line.strip()
        if text.startswith("/"):
            command = self.services.command
            prepared = await command.prepare_turn(text)  # /init, a command file
            if prepared is not None:
                return await self.run_turn(
                    prepared.prompt, model=prepared.model, tools=prepared.tools
                )
            prompt = await command.server_prompt(text)  # /mcp__<server>__<prompt>
            if isinstance(prompt, str):
                return await self.run_turn(prompt)
            return prompt if prompt is not None else await command.run(text)
        if not text:
            return None
        return await self.run_turn(text)

    async def run_turn(
        self,
        prompt: str,
        *,
        model: str | None = None,
        role: str | None = None,
        tools: frozenset[str] | None = None,
        images: tuple[Mapping[str, str], ...] = (),
        todo: list[dict[str, str]] | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> TurnResult:
        """Run one top-level turn for ``prompt`` through the turn driver; return how it ended
        (``tools``: offer only these, e.g. a command file's ``allowed-tools``; ``todo``: the
        turn's todo list instead of an empty one, an approved plan's steps; ``record``: extra
        fields of the turn record)."""
        try:
            role_spec = resolve_role(role or self.active_role)
        except UnknownRoleError as exc:
            raise UserRequestError(str(exc)) from None
        # git discovery and the index file read stay off the event loop
        scope = await asyncio.to_thread(self.compute_scope)
        await self.refresh_setup(scope)
        handoff, role_spec = self._route(prompt, role_spec, explicit=role is not None)
        self.start_mcp()
        if self._mcp is not None:
            await self._mcp.wait_started()  # a server still starting offers its tools to this turn
        self.plans.offer_tool()
        turn = replace(
            self.begin_turn(role_spec.name, scope=scope),
            role=role_spec,
            prompt=prompt,
            images=images,
            history=list(self.conversations.messages),
            requested_model=model or self.options.model,
            pinned_model=self.conversations.pinned_model,
            record=dict(record or {}),
            handoff=handoff,
            tools=tools,
        )
        self.current_turn = turn
        hooks = self.hook_setup.hooks(turn.scope.project_root, turn.scope.cwd)
        gate = self.permission_gate(
            turn.conversation_id, turn.config, turn.cancel.cancel, hooks=hooks
        )
        services = self.driver.services_for(turn, permissions=gate, hooks=hooks)

        def selected(selection: ModelSelection) -> None:
            self.last_selection = selection

        def closed(result: TurnResult) -> None:
            self.conversations.refresh()
            self.finish_turn()

        def prepare() -> None:
            if todo is None:
                self.conversations.clear_todo(role_spec.name)
            else:
                self.plans.start_todo(todo, role_spec.name)

        result = await self.driver.drive(
            turn, services, prepare=prepare, selected=selected, closed=closed
        )
        self.plans.finished(result, turn.conversation_id, turn.turn_id, role_spec.name)
        return result

    def user_config_dir(self) -> Path:
        """The user's smith folder (``$XDG_CONFIG_HOME/smith``, else ``~/.config/smith``) as
        this runtime's environment says: its ``AGENTS.md``, commands, skills and agents."""
        return config_dir(self.env)

    async def refresh_setup(self, scope: TurnScope | None = None) -> None:
        """Discover the skills and sub-agents again if a file changed (off the event loop),
        offer the ``skill`` tool while there are skills and the file roles to ``dispatch``,
        and show each problem found once (file and line)."""
        root = (scope or self.scope).project_root or self.options.cwd
        problems = await asyncio.to_thread(self.setup.refresh, Path(root))
        registry = self.services.tool
        if self.setup.skills:
            registry.register(SKILL_TOOL)
        else:
            registry.unregister(SKILL_TOOL.name)
        registry.register(self.dispatch.tool(child_role_names()))
        for problem in problems:
            self.emit(
                ev.CommandOutput(
                    command=SETUP_NOTICE, text=problem.text(), ok=False, role=self.active_role
                )
            )

    def _route(
        self, prompt: str, role_spec: RoleSpec, *, explicit: bool
    ) -> tuple[dict[str, Any] | None, RoleSpec]:
        """Who handles ``prompt``: ``@name`` hands it to that sub-agent (the dispatch's
        arguments); a complex request to Smith gets a hint, or the orchestrator with
        ``routing.auto``. ``explicit``: the caller chose the role, nothing is rerouted."""
        if explicit:
            return None, role_spec
        found = routing.handoff(prompt)
        if found is not None:
            name = found.role.name
            if not found.task:
                raise UserRequestError(f"say what {name} should do after @{name}")
            if not self.services.role.check_dispatch(role_spec.name, name):
                raise UserRequestError(f"the {role_spec.name} role may not dispatch to {name}")
            return {
                "target_role": name,
                "task": found.task,
                "context": {
                    "user_request_summary": found.task,
                    "role_instructions": f"The user handed this to you directly with @{name}.",
                },
            }, role_spec
        if role_spec.name == "direct" and routing.looks_complex(prompt):
            if self.config.model.routing.auto:
                spec = self.set_active_role("orchestrator")
                text = f"routed to the orchestrator ({spec.alias}): routing.auto is on"
                self.emit(ev.CommandOutput(command="/role", text=text, data={"role": spec.name}))
                return None, spec
            self.emit(ev.CommandOutput(command="route", text="hint: " + routing.HINT))
        return None, role_spec

    async def compact(self, focus: str | None = None) -> CompactionRecord:
        """``/compact``: summarise the older part of the active conversation now.

        The request goes to the model the next turn would use, with the active role's
        system prompt and tools counted in the budget. Raises
        :class:`~smith_tui.engine.compaction.CompactionError` when there is nothing to
        summarise or the summary request fails.
        """
        self._require_idle()
        conversations = self.conversations
        conversation_id = conversations.conversation_id
        if conversation_id is None or not conversations.messages:
            raise UserRequestError("there is nothing to compact yet: the conversation is empty")
        role_spec = resolve_role(self.active_role)
        scope = await asyncio.to_thread(self.compute_scope)
        config = self.config
        selection = await self.services.model.select(
            self.options.model, conversations.pinned_model, role_spec, config.effective
        )
        self.last_selection = selection
        compactor = build_compactor(
            conversation_id,
            selection,
            system_prompt=build_system_prompt(role_spec, scope),
            tools=self.services.tool.llm_specs(role_spec.name),
            window=WindowSettings.from_config(config.model),
            retry=RetryPolicy.from_config(config.model),
            role=role_spec.name,
            project_id=scope.project_id,
            llm=self.llm,
            emit=self.emit,
            store=self.store,
            hooks=self.hook_setup.hooks(scope.project_root, scope.cwd),
        )
        return await compactor.compact(
            conversations.messages,
            reason="manual",
            focus=focus,
            keep_turns=MANUAL_KEEP_TURNS,
            measured_before=measured_context(self.store, conversation_id),
        )

    def turn_session(self) -> TurnServices:
        """The session's part of a turn's services: the model client, the tools, the
        recorder, the usage totals and the store (the driver adds the turn's own)."""
        return TurnServices(
            llm=self.llm,
            registry=self.services.tool,
            emit=self.emit,
            recorder=self.persistence,
            usage=self.usage,
            now=lambda: datetime.now().astimezone(),
            store=self.store,
        )

    # -- configuration --------------------------------------------------------------------
    def reload_config(self) -> None:
        """Reload the layered config (after ``/config set`` or an edit in the config screen)."""
        self.overrides.reload()
        self._config_changed()

    def set_config(self, path: str, raw_value: str) -> Any:
        """``/config set``: validate then persist one override; returns the stored value."""
        value = self.overrides.set(path, raw_value)
        self._config_changed()
        return value

    def unset_config(self, path: str) -> None:
        """``/config unset``: remove one override (pruning empty parents)."""
        self.overrides.unset(path)
        self._config_changed()

    def _config_changed(self) -> None:
        if self.session.status == "running":
            self.sandbox.refresh(self.config.model)
            self._report_mode()
        if not self._llm_injected:
            self._llm = None  # rebuilt from the new llm_config on next use


class _LazyLLM:
    """Defers creating the LLM client until the model service first needs it."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def list_models(self, *, refresh: bool = False) -> list[Any]:
        return await self._runtime.llm.list_models(refresh=refresh)
