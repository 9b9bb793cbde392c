"""The turn driver: the one way a turn runs, top-level or dispatched (docs/DESIGN.md §5.2, §5.7).

start (``TurnStarted``, the turn row) → select the model → set the turn up →
:class:`~smith_tui.engine.turn.TurnLoop` → finish (orphan repair when it did not
complete, the turn record, ``TurnFinished``). A top-level turn and a dispatched
child differ only in their :class:`TurnPlan`. Whatever goes wrong becomes the
turn's :class:`~smith_tui.engine.turn.TurnResult`; failures while closing the turn
are logged, never raised over the result.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from smith_tui.cancel import CancelToken
from smith_tui.config import SmithConfig
from smith_tui.engine import events as ev
from smith_tui.engine.attachments import Attached, ResourceSource, attach
from smith_tui.engine.checkpoints import TurnCheckpoint, checkpoints_for
from smith_tui.engine.errors import AgentError, AgentFailure, normalize
from smith_tui.engine.hooks.hook_set import Asker, Hooks
from smith_tui.engine.hooks.turn_hooks import PromptBlocked, opening_context, run_to_stop
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.model_select import ModelSelection, ModelSelectionError
from smith_tui.engine.prompt import build_system_prompt, plan_mode_block, project_notes
from smith_tui.engine.prompt_images import IMAGES_KEY
from smith_tui.engine.roles import RoleSpec
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.spend_limits import SpendMeter, read_limits
from smith_tui.engine.turn import TurnDeps, TurnLoop, TurnResult, TurnSettings, TurnSetup
from smith_tui.engine.turn_control import TurnControl
from smith_tui.engine.user_setup import handoff_reply, setup_blocks

log = logging.getLogger(__name__)


class ModelSelector(Protocol):
    """Chooses the model of a turn (the model service)."""

    async def select(
        self,
        request_model: str | None,
        pinned: str | None,
        role_spec: RoleSpec,
        config: Mapping[str, Any],
    ) -> ModelSelection:
        """Resolve the model for ``role_spec``."""
        ...

    async def catalog(self) -> list[Any]:
        """The server's model catalog (its ``GET /models``)."""
        ...


class TurnBook(Protocol):
    """Where turns are opened and closed (the persistence service)."""

    def start_turn(self, conversation_id: str, role: str, turn_id: str) -> None:
        """Record that a turn started."""

    def finish_turn(
        self,
        conversation_id: str,
        turn_id: str,
        stop_reason: ev.StopReason,
        error: dict[str, Any] | None,
        record: dict[str, Any],
    ) -> None:
        """Close the turn and write its record."""

    def repair_orphans(self, conversation_id: str) -> None:
        """Answer tool calls left without a result."""

    def take_review_note(self, conversation_id: str) -> str | None:
        """What a per-hunk review reverted, for the next prompt to tell (once)."""


@dataclass(frozen=True)
class ExecutionContext:
    """What a top-level turn observes, fixed when it begins (docs/DESIGN.md §5.2).

    A child dispatched during the turn shares its config snapshot and scope.
    """

    session_id: str
    turn_id: str
    active_role: str
    conversation_id: str
    config_snapshot: Mapping[str, Any]
    config_model: SmithConfig
    """The validated, typed view of ``config_snapshot`` (what the loop's settings come from)."""
    scope: TurnScope


@dataclass(frozen=True)
class TurnPlan:
    """What one turn is: its ids, role, prompt, history and the context it runs in."""

    turn_id: str
    conversation_id: str
    role: RoleSpec
    prompt: str
    history: list[TranscriptMessage]
    cancel: CancelToken
    scope: TurnScope
    config: Mapping[str, Any]
    config_model: SmithConfig
    """The validated, typed view of ``config``."""
    requested_model: str | None = None
    pinned_model: str | None = None
    job_id: str | None = None
    """Set for a dispatched child turn (its settings are the child's)."""
    usage_scope: tuple[str, str] | None = None
    record: Mapping[str, Any] = field(default_factory=dict)
    """Extra fields of the turn record (a child's job id and session)."""
    permissions: Any = None
    """The top-level turn's :class:`~smith_tui.engine.permission_gate.PermissionGate`
    (``None``: no permission checks); its dispatched children share it."""
    tools: frozenset[str] | None = None
    """The only tools this turn is offered (``None``: all the role has); never widens."""
    started_at: float = field(default_factory=time.time)
    images: tuple[Mapping[str, str], ...] = ()
    """The prompt's images (engine/prompt_images.py), kept with its user message."""
    handoff: Mapping[str, Any] | None = None
    """``@name``: the arguments of the dispatch the turn makes instead of asking its model
    (engine/routing.py); nothing of the prompt is attached then, the sub-agent reads."""
    control: TurnControl | None = None
    """Pause / step / resume of the turn (a dispatched child's: below its parent's)."""


@dataclass
class TurnHooks:
    """What the owner of a turn does at its steps (all optional)."""

    prepare: Callable[[], None] | None = None
    """Before the model is selected (a failure ends the turn with an error)."""
    selected: Callable[[ModelSelection], None] | None = None
    closed: Callable[[TurnResult], None] | None = None
    """After the turn is on record, before ``TurnFinished`` is emitted."""


class TurnDriver:
    """Runs turns: the one sequence shared by top-level turns and dispatched children."""

    def __init__(
        self,
        *,
        book: TurnBook,
        models: ModelSelector,
        deps: Callable[[], TurnDeps],
        emit: Callable[[ev.Event], None],
        session_id: str,
        store: Any,
    ) -> None:
        self.book = book
        self.models = models
        self.deps = deps
        self.emit = emit
        self.session_id = session_id
        self.store = store
        self.checkpoint: TurnCheckpoint | None = None
        """The checkpoint of the top-level turn in flight (its dispatched children share it)."""
        self.permissions: Any = None
        """The permission gate of the top-level turn in flight (its children share it)."""
        self.spend: SpendMeter | None = None
        """The spend of the top-level turn in flight against ``budget`` (children add to it)."""
        self.files: Any = None
        """The front end's file backend for read/edit/write (``tools.files.FileBackend``; an
        editor's buffers over ACP), or ``None``: the disk."""
        self.commands: Any = None
        """The front end's runner of bash commands (``tools.commands.CommandRunner``; an
        editor's terminals over ACP), or ``None``: a local subprocess."""
        self.resources: ResourceSource | None = None
        """Where ``@server:uri`` attachments are read (the MCP servers), or ``None``."""
        self.user_setup: Any = None
        """The user's skills and sub-agents (``engine.user_setup.SetupCatalog``), or ``None``."""
        self.hooks: Hooks | None = None
        """The session's hooks (``engine.hooks``) for the top-level turn in flight and its
        children, or ``None``: no hooks configured."""

    async def drive(self, plan: TurnPlan, hooks: TurnHooks | None = None) -> TurnResult:
        """Run ``plan`` to its end and return how it ended (a task cancel still propagates)."""
        hooks = hooks or TurnHooks()
        attached = Attached(plan.prompt)
        if plan.job_id is None and plan.handoff is None:
            attached = await self._attach(plan)
        self.emit(
            ev.TurnStarted(
                turn_id=plan.turn_id,
                conversation_id=plan.conversation_id,
                prompt=plan.prompt,
                attachments=list(attached.attachments),
                role=plan.role.name,
                job_id=plan.job_id,
            )
        )
        for problem in attached.problems:
            self.emit(
                ev.CommandOutput(command="attach", text=problem, ok=False, role=plan.role.name)
            )
        if plan.job_id is None:
            for warning in plan.scope.warnings:
                self.emit(
                    ev.ScopeWarning(turn_id=plan.turn_id, message=warning, role=plan.role.name)
                )
        state: dict[str, Any] = {"model": None, "attached": attached}
        result: TurnResult | None = None
        if plan.job_id is None:
            self.checkpoint = self._checkpoint(plan)
            self.permissions = plan.permissions
            self.spend = self._spend_meter(plan)
        try:
            result = await self._run(plan, hooks, state)
            if plan.job_id is None and self.checkpoint is not None:
                await self.checkpoint.finish()
        finally:
            if result is None:
                result = TurnResult("cancelled", error=normalize("cancelled"))
            self._close(plan, hooks, result, state["model"])
        return result

    async def _run(self, plan: TurnPlan, hooks: TurnHooks, state: dict[str, Any]) -> TurnResult:
        try:
            if hooks.prepare is not None:
                hooks.prepare()
            self.book.start_turn(plan.conversation_id, plan.role.name, plan.turn_id)
            selection = await self.models.select(
                plan.requested_model, plan.pinned_model, plan.role, plan.config
            )
            state["model"] = selection.model
            if hooks.selected is not None:
                hooks.selected(selection)
            setup = self.setup(plan, selection)
            attached: Attached = state["attached"]
            user: TranscriptMessage = {"role": "user", "content": attached.content}
            metadata = attached.metadata(plan.prompt)
            if attached.images:  # @path images go only to a model that takes images
                metadata = await self._image_gate(plan, selection.model, metadata)
            review = self._review_note(plan)
            if review:  # the model hears what a per-hunk review reverted (engine/review.py)
                user["content"] = f"{review}\n\n{attached.content}"
                metadata = {"prompt": plan.prompt, **metadata, "review": review}
            if plan.images:
                kept = list(metadata.get(IMAGES_KEY) or [])  # @path images go first
                metadata = {**metadata, IMAGES_KEY: [*kept, *(dict(i) for i in plan.images)]}
            if metadata:
                user["metadata"] = metadata
            reply = handoff_reply(plan.handoff) if plan.handoff else None
            asker = Asker(plan.role.name, plan.job_id, plan.turn_id, None, plan.cancel)
            if self.hooks is not None and plan.handoff is None:
                await opening_context(self.hooks, plan.prompt, user, asker)
            loop = TurnLoop(setup, self.deps(), plan.history, user, reply)
            return await run_to_stop(self.hooks, loop, asker)
        except PromptBlocked as exc:
            return self._failed(plan, AgentError("policy", "hook_blocked", str(exc), origin="hook"))
        except ModelSelectionError as exc:
            return self._failed(plan, AgentError("config", "no_model", str(exc)))
        except AgentFailure as exc:
            return self._failed(plan, exc.error)
        except Exception as exc:  # anything thrown ends this turn, never its caller
            return self._failed(plan, normalize(exc))

    async def _image_gate(
        self, plan: TurnPlan, model: str, metadata: dict[str, Any]
    ) -> dict[str, Any]:
        """``metadata`` as is when the catalog lists image input for ``model``; else without
        its images (engine/prompt_images.py), with a notice: the prompt goes on without them."""
        from smith_tui.engine.prompt_images import (
            declared_image_models,
            takes_images,
            without_images,
        )

        declared = declared_image_models(plan.config)
        try:
            if takes_images(await self.models.catalog(), model, declared):
                return metadata
        except Exception:  # no catalog: nothing says the model takes images
            log.exception("reading the model catalog for turn %s failed", plan.turn_id)
        self.emit(
            ev.CommandOutput(
                command="attach",
                text=f"the model {model} does not take images (the server's GET /models lists "
                "no image input for it), so the prompt goes without them; pick a model that "
                "does with /model, or name it in services.model.image_input if it does take "
                "images",
                ok=False,
                role=plan.role.name,
            )
        )
        return without_images(metadata, "the model takes no images")

    def _review_note(self, plan: TurnPlan) -> str | None:
        """A waiting review note, for a top-level turn of the user's own prompt."""
        if plan.job_id is not None or plan.handoff:
            return None
        return self.book.take_review_note(plan.conversation_id)

    async def _attach(self, plan: TurnPlan) -> Attached:
        """The prompt with the files its ``@path`` tokens name (read off the event loop) and
        the MCP resources its ``@server:uri`` tokens name."""
        try:
            return await attach(
                plan.prompt,
                cwd=plan.scope.cwd,
                project_root=plan.scope.project_root,
                config=plan.config,
                role=plan.role.name,
                cancel=plan.cancel,
                resources=self.resources,
            )
        except Exception as exc:  # the prompt still goes, as typed
            log.exception("attaching the files of turn %s failed", plan.turn_id)
            return Attached(plan.prompt, problems=[f"the @path files were not attached: {exc}"])

    def _spend_meter(self, plan: TurnPlan) -> SpendMeter:
        """The spend meter of a top-level turn, starting from what its conversation spent."""
        tokens, cost = 0, 0.0
        limits = read_limits(plan.config_model)
        usage = getattr(self.store, "usage", None)
        if limits and usage is not None:
            try:
                for totals in usage.totals_by_role(plan.conversation_id).values():
                    tokens += int(totals.total_tokens)
                    cost += float(totals.cost or 0.0)
            except Exception:
                log.exception("reading the spend of conversation %s failed", plan.conversation_id)
        return SpendMeter(
            limits,
            turn_id=plan.turn_id,
            emit=self.emit,
            role=plan.role.name,
            conversation_tokens=tokens,
            conversation_cost=cost,
        )

    def _notes_block(self, plan: TurnPlan) -> str:
        """The ``## Project notes`` block of the turn's system prompt (``""`` when none)."""
        memory = getattr(self.store, "project_memory", None)
        # Sub-agents have no note tool: the block would name notes they cannot read.
        if memory is None or not plan.scope.project_id or plan.job_id is not None:
            return ""
        try:
            notes = memory.list(plan.scope.project_id)
        except Exception:
            log.exception("listing the project notes failed")
            return ""
        return project_notes([note.note_id for note in notes])

    def _checkpoint(self, plan: TurnPlan) -> TurnCheckpoint | None:
        """The checkpoint of a top-level turn (``None`` when checkpoints are off or unusable)."""
        path = getattr(self.store, "path", None)
        if path is None:
            return None
        try:
            checkpoints = checkpoints_for(
                Path(path).parent, plan.scope.project_root, plan.config_model
            )
        except Exception:
            log.exception("checkpoints of turn %s are unavailable", plan.turn_id)
            return None
        return TurnCheckpoint(
            checkpoints,
            turn_id=plan.turn_id,
            conversation_id=plan.conversation_id,
            prompt=plan.prompt,
            emit=self.emit,
            role=plan.role.name,
        )

    def setup(self, plan: TurnPlan, selection: ModelSelection) -> TurnSetup:
        """The fixed setup of ``plan``'s loop once its model is chosen."""
        return TurnSetup(
            turn_id=plan.turn_id,
            conversation_id=plan.conversation_id,
            role=plan.role.name,
            model=selection.model,
            system_prompt=build_system_prompt(
                plan.role,
                plan.scope,
                extra_blocks=[
                    *setup_blocks(plan.role, self.user_setup),
                    self._notes_block(plan),
                    plan_mode_block(plan.permissions, plan.job_id),
                ],
            ),
            config=plan.config,
            cancel=plan.cancel,
            cwd=plan.scope.cwd,
            settings=TurnSettings.from_config(plan.config_model, child=plan.job_id is not None),
            context_window=selection.context_window,
            max_output_tokens=selection.max_output_tokens,
            job_id=plan.job_id,
            usage_scope=plan.usage_scope,
            tools=plan.tools,
            control=plan.control,
            project_id=plan.scope.project_id,
            project_root=plan.scope.project_root,
            pricing=selection.pricing,
            spend=self.spend,
            services=MappingProxyType(
                {
                    "store": self.store,
                    "runtime_session": self.session_id,
                    "checkpoint": self.checkpoint,
                    "permissions": self.permissions,
                    "files": self.files,
                    "commands": self.commands,
                    "hooks": self.hooks,
                    "skills": self.user_setup,
                    "turn_control": plan.control,
                }
            ),
        )

    def _failed(self, plan: TurnPlan, error: AgentError) -> TurnResult:
        self.emit(
            ev.StatusChanged(
                status="error", detail=error.message, role=plan.role.name, job_id=plan.job_id
            )
        )
        return TurnResult("error", error=error)

    def _close(
        self, plan: TurnPlan, hooks: TurnHooks, result: TurnResult, model: str | None
    ) -> None:
        if result.stop_reason != "completed":
            # A turn torn down while a tool ran (its task cancelled, an unexpected error)
            # left the call on record without a result: answer it so the next request is valid.
            try:
                self.book.repair_orphans(plan.conversation_id)
            except Exception:
                log.exception("repairing the orphaned tool calls of turn %s failed", plan.turn_id)
        error = result.error.to_dict() if result.error else None
        record = {
            "turn_id": plan.turn_id,
            "role": plan.role.name,
            "prompt": plan.prompt,
            "model": model,
            "stop_reason": result.stop_reason,
            "error": error,
            "rounds": result.rounds,
            "usage": result.usage,
            "started_at": plan.started_at,
            **plan.record,
        }
        if plan.job_id is None and self.checkpoint is not None and self.checkpoint.mark:
            record["checkpoint"] = self.checkpoint.mark  # the transcript's mark on reload
        try:
            self.book.finish_turn(
                plan.conversation_id, plan.turn_id, result.stop_reason, error, record
            )
        except Exception:  # the record is best effort; the result still reaches the caller
            log.exception("writing the record of turn %s failed", plan.turn_id)
        if hooks.closed is not None:
            hooks.closed(result)
        self.emit(
            ev.TurnFinished(
                turn_id=plan.turn_id,
                conversation_id=plan.conversation_id,
                stop_reason=result.stop_reason,
                text=result.text,
                error=error,
                usage=result.usage,
                role=plan.role.name,
                job_id=plan.job_id,
            )
        )
