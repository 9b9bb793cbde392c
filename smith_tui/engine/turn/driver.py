"""The turn driver: the one way a turn runs, top-level or dispatched (docs/DESIGN.md §5.2, §5.7).

:meth:`TurnDriver.drive`: start (``TurnStarted``, the turn row) → select the model → set
the turn up (:meth:`TurnDriver.set_up`: the system prompt) → the opening message and hooks →
:class:`~smith_tui.engine.turn.loop.TurnLoop` → finish (orphan repair when it did not
complete, the turn record, ``TurnFinished``). A top-level turn and a dispatched child differ
only in their :class:`~smith_tui.engine.turn.frame.Turn`; both get the
:class:`~smith_tui.engine.turn.frame.TurnServices` the top-level turn's owner built with
:meth:`TurnDriver.services_for`. The driver keeps no state of a turn. Whatever goes wrong
becomes the turn's :class:`~smith_tui.engine.turn.stop.TurnResult`; failures while
closing the turn are logged, never raised over the result.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from smith_tui.engine import events as ev
from smith_tui.engine.attachments import Attached, ResourceSource, attach
from smith_tui.engine.checkpoints import TurnCheckpoint, checkpoints_for
from smith_tui.engine.errors import AgentError, AgentFailure, normalize
from smith_tui.engine.hooks.hook_set import Asker, Hooks
from smith_tui.engine.hooks.turn_hooks import PromptBlocked, opening_context, run_to_stop
from smith_tui.engine.messages import TranscriptMessage
from smith_tui.engine.model_select import ModelSelection, ModelSelectionError
from smith_tui.engine.permission_gate import PermissionGate
from smith_tui.engine.prompt import build_system_prompt, plan_mode_block, project_notes
from smith_tui.engine.prompt_images import IMAGES_KEY
from smith_tui.engine.roles import RoleSpec
from smith_tui.engine.spend_limits import SpendMeter, read_limits
from smith_tui.engine.turn.frame import Turn, TurnServices
from smith_tui.engine.turn.loop import TurnLoop
from smith_tui.engine.turn.stop import TurnResult
from smith_tui.engine.user_setup import SetupCatalog, handoff_reply, setup_blocks
from smith_tui.tools.command_runner import CommandRunner
from smith_tui.tools.ports import FileBackend

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


Step = Callable[[], None]
"""What the owner of a top-level turn does before its model is selected."""


class TurnDriver:
    """Runs turns: the one sequence shared by top-level turns and dispatched children.

    It holds the session's parts only (``session``: the loop's collaborators; the front
    end's ports below, set once per session); a turn's own services are built by
    :meth:`services_for` and passed to :meth:`drive`.
    """

    def __init__(
        self,
        *,
        book: TurnBook,
        models: ModelSelector,
        session: Callable[[], TurnServices],
        emit: Callable[[ev.Event], None],
    ) -> None:
        self.book = book
        self.models = models
        self.session = session
        """The session's part of a turn's services (model client, tools, recorder, store)."""
        self.emit = emit
        self.files: FileBackend | None = None
        """The front end's file backend for read/edit/write (an editor's buffers over ACP),
        or ``None``: the disk."""
        self.commands: CommandRunner | None = None
        """The front end's runner of bash commands (an editor's terminals over ACP), or
        ``None``: a local subprocess."""
        self.resources: ResourceSource | None = None
        """Where ``@server:uri`` attachments are read (the MCP servers), or ``None``."""
        self.user_setup: SetupCatalog | None = None
        """The user's skills and sub-agents, or ``None``."""

    def services_for(
        self, turn: Turn, *, permissions: PermissionGate | None, hooks: Hooks | None
    ) -> TurnServices:
        """The services of top-level ``turn``, built once: the session's parts, the front
        end's ports, and the turn's own checkpoint, spend meter, permission gate and hooks.
        The turns it dispatches get the same object."""
        session = self.session()
        return replace(
            session,
            permissions=permissions,
            hooks=hooks,
            checkpoint=self._checkpoint(turn, session),
            spend=self._spend_meter(turn, session),
            files=self.files,
            commands=self.commands,
            skills=self.user_setup,
            resources=self.resources,
        )

    async def drive(
        self,
        turn: Turn,
        services: TurnServices,
        *,
        prepare: Step | None = None,
        selected: Callable[[ModelSelection], None] | None = None,
        closed: Callable[[TurnResult], None] | None = None,
    ) -> TurnResult:
        """Run ``turn`` to its end and return how it ended (a task cancel still propagates).

        The owner's steps (all optional): ``prepare`` before the model is selected (a
        failure ends the turn with an error), ``selected`` with the selection, ``closed``
        once the turn is on record, before ``TurnFinished`` is emitted.
        """
        attached = Attached(turn.prompt)
        if turn.top_level and turn.handoff is None:
            attached = await self._attach(turn, services)
        self.emit(
            ev.TurnStarted(
                turn_id=turn.turn_id,
                conversation_id=turn.conversation_id,
                prompt=turn.prompt,
                attachments=list(attached.attachments),
                role=turn.role_name,
                job_id=turn.job_id,
            )
        )
        for problem in attached.problems:
            self.emit(
                ev.CommandOutput(command="attach", text=problem, ok=False, role=turn.role_name)
            )
        if turn.top_level:
            for warning in turn.scope.warnings:
                self.emit(
                    ev.ScopeWarning(turn_id=turn.turn_id, message=warning, role=turn.role_name)
                )
        model: str | None = None

        def chose(selection: ModelSelection) -> None:
            nonlocal model
            model = selection.model
            if selected is not None:
                selected(selection)

        result: TurnResult | None = None
        try:
            result = await self._run(turn, services, attached, prepare, chose)
            if turn.top_level and services.checkpoint is not None:
                await services.checkpoint.finish()
        finally:
            if result is None:
                result = TurnResult("cancelled", error=normalize("cancelled"))
            self._close(turn, services, result, model, closed)
        return result

    async def _run(
        self,
        turn: Turn,
        services: TurnServices,
        attached: Attached,
        prepare: Step | None,
        chose: Callable[[ModelSelection], None],
    ) -> TurnResult:
        try:
            if prepare is not None:
                prepare()
            self.book.start_turn(turn.conversation_id, turn.role_name, turn.turn_id)
            selection = await self.models.select(
                turn.requested_model, turn.pinned_model, turn.role, turn.config
            )
            chose(selection)
            turn = self.set_up(turn, services, selection)
            user = await self._user_message(turn, attached)
            reply = handoff_reply(turn.handoff) if turn.handoff else None
            asker = Asker(turn.role_name, turn.job_id, turn.turn_id, None, turn.cancel)
            if services.hooks is not None and turn.handoff is None:
                await opening_context(services.hooks, turn.prompt, user, asker)
            loop = TurnLoop(turn, services, user, reply)
            return await run_to_stop(services.hooks, loop, asker)
        except PromptBlocked as exc:
            return self._failed(turn, AgentError("policy", "hook_blocked", str(exc), origin="hook"))
        except ModelSelectionError as exc:
            return self._failed(turn, AgentError("config", "no_model", str(exc)))
        except AgentFailure as exc:
            return self._failed(turn, exc.error)
        except Exception as exc:  # anything thrown ends this turn, never its caller
            return self._failed(turn, normalize(exc))

    async def _user_message(self, turn: Turn, attached: Attached) -> TranscriptMessage:
        """The message that opens the turn: the prompt with its attachments, a waiting
        review note, the prompt's images."""
        user: TranscriptMessage = {"role": "user", "content": attached.content}
        metadata = attached.metadata(turn.prompt)
        if attached.images:  # @path images go only to a model that takes images
            metadata = await self._image_gate(turn, turn.model, metadata)
        review = self._review_note(turn)
        if review:  # the model hears what a per-hunk review reverted (engine/review.py)
            user["content"] = f"{review}\n\n{attached.content}"
            metadata = {"prompt": turn.prompt, **metadata, "review": review}
        if turn.images:
            kept = list(metadata.get(IMAGES_KEY) or [])  # @path images go first
            metadata = {**metadata, IMAGES_KEY: [*kept, *(dict(i) for i in turn.images)]}
        if metadata:
            user["metadata"] = metadata
        return user

    async def _image_gate(self, turn: Turn, model: str, metadata: dict[str, Any]) -> dict[str, Any]:
        """``metadata`` as is when the catalog lists image input for ``model``; else without
        its images (engine/prompt_images.py), with a notice: the prompt goes on without them."""
        from smith_tui.engine.prompt_images import (
            declared_image_models,
            takes_images,
            without_images,
        )

        declared = declared_image_models(turn.config)
        try:
            if takes_images(await self.models.catalog(), model, declared):
                return metadata
        except Exception:  # no catalog: nothing says the model takes images
            log.exception("reading the model catalog for turn %s failed", turn.turn_id)
        self.emit(
            ev.CommandOutput(
                command="attach",
                text=f"the model {model} does not take images (the server's GET /models lists "
                "no image input for it), so the prompt goes without them; pick a model that "
                "does with /model, or name it in services.model.image_input if it does take "
                "images",
                ok=False,
                role=turn.role_name,
            )
        )
        return without_images(metadata, "the model takes no images")

    def _review_note(self, turn: Turn) -> str | None:
        """A waiting review note, for a top-level turn of the user's own prompt."""
        if turn.job_id is not None or turn.handoff:
            return None
        return self.book.take_review_note(turn.conversation_id)

    async def _attach(self, turn: Turn, services: TurnServices) -> Attached:
        """The prompt with the files its ``@path`` tokens name (read off the event loop) and
        the MCP resources its ``@server:uri`` tokens name."""
        try:
            return await attach(
                turn.prompt,
                cwd=turn.scope.cwd,
                project_root=turn.scope.project_root,
                config=turn.config_model,
                role=turn.role_name,
                cancel=turn.cancel,
                resources=services.resources,
            )
        except Exception as exc:  # the prompt still goes, as typed
            log.exception("attaching the files of turn %s failed", turn.turn_id)
            return Attached(turn.prompt, problems=[f"the @path files were not attached: {exc}"])

    def _spend_meter(self, turn: Turn, session: TurnServices) -> SpendMeter:
        """The spend meter of a top-level turn, starting from what its conversation spent."""
        tokens, cost = 0, 0.0
        limits = read_limits(turn.config_model)
        usage = getattr(session.store, "usage", None)
        if limits and usage is not None:
            try:
                for totals in usage.totals_by_role(turn.conversation_id).values():
                    tokens += int(totals.total_tokens)
                    cost += float(totals.cost or 0.0)
            except Exception:
                log.exception("reading the spend of conversation %s failed", turn.conversation_id)
        return SpendMeter(
            limits,
            turn_id=turn.turn_id,
            emit=self.emit,
            role=turn.role_name,
            conversation_tokens=tokens,
            conversation_cost=cost,
        )

    def _notes_block(self, turn: Turn, services: TurnServices) -> str:
        """The ``## Project notes`` block of the turn's system prompt (``""`` when none)."""
        memory = getattr(services.store, "project_memory", None)
        # Sub-agents have no note tool: the block would name notes they cannot read.
        if memory is None or not turn.scope.project_id or turn.job_id is not None:
            return ""
        try:
            notes = memory.list(turn.scope.project_id)
        except Exception:
            log.exception("listing the project notes failed")
            return ""
        return project_notes([note.note_id for note in notes])

    def _checkpoint(self, turn: Turn, session: TurnServices) -> TurnCheckpoint | None:
        """The checkpoint of a top-level turn (``None`` when checkpoints are off or unusable)."""
        path = getattr(session.store, "path", None)
        if path is None:
            return None
        try:
            checkpoints = checkpoints_for(
                Path(path).parent, turn.scope.project_root, turn.config_model
            )
        except Exception:
            log.exception("checkpoints of turn %s are unavailable", turn.turn_id)
            return None
        return TurnCheckpoint(
            checkpoints,
            turn_id=turn.turn_id,
            conversation_id=turn.conversation_id,
            prompt=turn.prompt,
            emit=self.emit,
            role=turn.role_name,
        )

    def set_up(self, turn: Turn, services: TurnServices, selection: ModelSelection) -> Turn:
        """``turn`` once its model is chosen: the selection and the system prompt."""
        system_prompt = build_system_prompt(
            turn.role,
            turn.scope,
            extra_blocks=[
                *setup_blocks(turn.role, services.skills),
                self._notes_block(turn, services),
                plan_mode_block(services.permissions, turn.job_id),
            ],
        )
        return replace(turn, selection=selection, system_prompt=system_prompt)

    def _failed(self, turn: Turn, error: AgentError) -> TurnResult:
        self.emit(
            ev.StatusChanged(
                status="error", detail=error.message, role=turn.role_name, job_id=turn.job_id
            )
        )
        return TurnResult("error", error=error)

    def _close(
        self,
        turn: Turn,
        services: TurnServices,
        result: TurnResult,
        model: str | None,
        closed: Callable[[TurnResult], None] | None,
    ) -> None:
        if result.stop_reason != "completed":
            # A turn torn down while a tool ran (its task cancelled, an unexpected error)
            # left the call on record without a result: answer it so the next request is valid.
            try:
                self.book.repair_orphans(turn.conversation_id)
            except Exception:
                log.exception("repairing the orphaned tool calls of turn %s failed", turn.turn_id)
        error = result.error.to_dict() if result.error else None
        record = {
            "turn_id": turn.turn_id,
            "role": turn.role_name,
            "prompt": turn.prompt,
            "model": model,
            "stop_reason": result.stop_reason,
            "error": error,
            "rounds": result.rounds,
            "usage": result.usage,
            "started_at": turn.started_at,
            **turn.record,
        }
        checkpoint = services.checkpoint
        if turn.top_level and checkpoint is not None and checkpoint.mark:
            record["checkpoint"] = checkpoint.mark  # the transcript's mark on reload
        try:
            self.book.finish_turn(
                turn.conversation_id, turn.turn_id, result.stop_reason, error, record
            )
        except Exception:  # the record is best effort; the result still reaches the caller
            log.exception("writing the record of turn %s failed", turn.turn_id)
        if closed is not None:
            closed(result)
        self.emit(
            ev.TurnFinished(
                turn_id=turn.turn_id,
                conversation_id=turn.conversation_id,
                stop_reason=result.stop_reason,
                text=result.text,
                error=error,
                usage=result.usage,
                role=turn.role_name,
                job_id=turn.job_id,
            )
        )
