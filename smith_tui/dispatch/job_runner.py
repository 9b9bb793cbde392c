"""Run a dispatch job as an isolated child turn (docs/DESIGN.md §5.7).

The child gets its own conversation (linked to the parent's), its own step
budget, a repeat guard and a wall-clock deadline (``services.dispatch.child_timeout_s``:
past it the child is cancelled and the parent gets a ``blocked`` result saying so; time
it spends paused does not count), its own pause control below the parent's,
shares the parent's config, service handles and token/cost budget, and must end with
``report``. Its events carry the job id, so front ends can
show it in the dispatch tree; ``DispatchFinished`` carries the normalised
result the parent receives.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from smith_tui.dispatch.job import DispatchJob, child_prompt
from smith_tui.dispatch.result import ChildOutcome, dispatch_result
from smith_tui.engine import events as ev
from smith_tui.engine.errors import normalize
from smith_tui.engine.roles import report_shape, resolve_role
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.turn import Turn, TurnDriver, TurnResult, TurnServices
from smith_tui.engine.turn_control import wait_running
from smith_tui.tools.spec import ToolContext, ToolError
from smith_tui.tools.worktrees import WorkerTree, WorkerTrees, WorktreeError, describe


class ChildConversations(Protocol):
    """Creates a child's own conversation (the store's conversations)."""

    def create(
        self,
        project_id: str,
        title: str | None = None,
        *,
        parent_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Create a conversation and return its id."""
        ...


#: Seconds a child cancelled at its deadline gets to wind down before its task is cancelled.
CHILD_GRACE_S = 5.0


def child_session_id(job: DispatchJob) -> str:
    """The session id of a child's isolated execution context."""
    return f"session-child-{job.job_id}"


class ChildRunner:
    """Runs child turns for the ``dispatch`` tool, through the runtime's turn driver.

    The child is built from the dispatching call's turn and gets its services
    (``ToolContext.turn`` and ``.services``: it shares the config snapshot, the scope and
    the top-level turn's gate, checkpoint and spend); ``jobs`` holds the jobs in flight by
    id, for cancelling one.
    """

    def __init__(
        self,
        driver: TurnDriver,
        *,
        conversations: ChildConversations,
        jobs: dict[str, DispatchJob],
        emit: Callable[[ev.Event], None],
        worktrees: WorkerTrees | None = None,
    ) -> None:
        self.worktrees = worktrees
        self.driver = driver
        self.conversations = conversations
        self.jobs = jobs
        self.emit = emit

    async def run(self, job: DispatchJob, parent: ToolContext) -> ChildOutcome:
        """Run ``job`` as an isolated child turn that must end with ``report``.

        Never raises for a failing child: every way it can end becomes a
        :class:`ChildOutcome`, and ``DispatchFinished`` is always emitted.
        """
        parent_job = parent.job_id
        tree = await self._worktree(job, parent)  # a refusal is the dispatch call's error
        self.jobs[job.job_id] = job  # before it is announced: a front end may pause it at once
        self.emit(
            ev.DispatchStarted(
                turn_id=parent.turn_id,
                target_role=job.target_role,
                task=job.task,
                parent_job_id=parent_job,
                call_id=parent.call_id,
                role=parent.role,
                job_id=job.job_id,
            )
        )
        try:
            outcome = await self._run_child_turn(job, parent, tree)
            if tree is not None:
                outcome.worktree = await self._collect(job, tree)
        except asyncio.CancelledError:
            self._finished(job, parent, ChildOutcome("cancelled", None, {}))
            raise
        except Exception as exc:  # a broken child must not break the parent's loop
            outcome = ChildOutcome("error", None, {}, error=normalize(exc).message)
        finally:
            self.jobs.pop(job.job_id, None)
            job.control.close()
        self._finished(job, parent, outcome)
        return outcome

    async def _worktree(self, job: DispatchJob, parent: ToolContext) -> WorkerTree | None:
        """The child's own worktree when the job or ``services.dispatch.worktree`` (for
        workers) asks for one; a :class:`ToolError` saying why when it cannot be made."""
        turn = parent.turn
        if not isinstance(turn, Turn):
            return None
        wanted = job.worktree
        if wanted is None:
            wanted = bool(turn.config_model.services.dispatch.worktree) and (
                report_shape(job.target_role) == "worker"
            )
        if not wanted:
            return None
        if self.worktrees is None:
            raise ToolError("worktree: this session keeps no worktrees (no data folder)")
        return await asyncio.to_thread(self.worktrees.create, turn.scope.project_root, job.job_id)

    async def _collect(self, job: DispatchJob, tree: WorkerTree) -> dict[str, Any]:
        """Commit what the child left in its worktree and describe it for the parent."""
        assert self.worktrees is not None
        message = f"smith worker {job.job_id}: {job.task[:200]}"
        try:
            done, change = await asyncio.to_thread(self.worktrees.collect, tree, message)
        except WorktreeError as exc:
            return {
                "branch": tree.branch,
                "path": tree.path,
                "base": tree.base,
                "error": exc.message,
            }
        return describe(done, change)

    async def _run_child_turn(
        self, job: DispatchJob, parent: ToolContext, tree: WorkerTree | None = None
    ) -> ChildOutcome:
        context, services = parent.turn, parent.services
        if not isinstance(context, Turn) or not isinstance(services, TurnServices):
            raise RuntimeError("dispatch outside a turn")
        role_spec = resolve_role(job.target_role)
        conversation_id = self.conversations.create(
            context.scope.project_id or "unknown",
            f"{role_spec.alias}: {job.task[:60]}",
            parent_id=parent.conversation_id,
            metadata={
                "job_id": job.job_id,
                "session": child_session_id(job),
                "parent_turn_id": job.parent_turn_id,
                "role": role_spec.name,
            },
        )
        turn = Turn(
            turn_id=f"{job.job_id}-t1",
            conversation_id=conversation_id,
            role=role_spec,
            prompt=child_prompt(job),
            cancel=job.cancel,
            scope=context.scope if tree is None else _scope_in(context.scope, Path(tree.path)),
            config=context.config,
            config_model=context.config_model,
            # A dispatch's model, else the one a user's agent file chose.
            requested_model=job.model or role_spec.model,
            job_id=job.job_id,
            control=job.control,
            # usage is the top-level turn's, however deep the dispatch
            usage_scope=context.usage_scope or (context.conversation_id, context.turn_id),
            record={"job_id": job.job_id, "session": child_session_id(job)},
        )
        timeout = float(context.config_model.services.dispatch.child_timeout_s)
        result, timed_out = await self._drive_with_deadline(turn, services, job, timeout)
        report = result.terminal.metadata.get("report") if result.terminal else None
        if timed_out and report is None:
            return ChildOutcome(
                stop_reason="timeout",
                report=None,
                usage=result.usage,
                conversation_id=conversation_id,
                error=(
                    f"the {job.target_role} ran past its deadline of {timeout:g} s "
                    "(services.dispatch.child_timeout_s) and was cancelled"
                ),
                text=result.text,
                timed_out=timeout,
            )
        return ChildOutcome(
            stop_reason=result.stop_reason,
            report=report,
            usage=result.usage,
            conversation_id=conversation_id,
            error=result.error.message if result.error and not report else None,
            loop=result.loop_detected,
            text=result.text,
        )

    async def _drive_with_deadline(
        self, turn: Turn, services: TurnServices, job: DispatchJob, deadline_s: float
    ) -> tuple[TurnResult, bool]:
        """Run the child turn; past ``deadline_s`` seconds cancel it (its token first, so it
        winds down and goes on record; its task after :data:`CHILD_GRACE_S` more). Time
        the child spends paused does not count (:func:`wait_running`)."""
        task = asyncio.ensure_future(self.driver.drive(turn, services))
        try:
            if await wait_running(task, deadline_s, job.control):
                return task.result(), False
            job.cancel.cancel(f"deadline of {deadline_s:g} s passed")
            done, _ = await asyncio.wait({task}, timeout=CHILD_GRACE_S)
            if done:
                return task.result(), True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return TurnResult("cancelled", error=normalize("cancelled")), True
        except asyncio.CancelledError:
            task.cancel()  # the parent was cancelled: the child goes with it
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise

    def _finished(self, job: DispatchJob, parent: ToolContext, outcome: ChildOutcome) -> None:
        result = dispatch_result(job, outcome)
        self.emit(
            ev.DispatchFinished(
                target_role=job.target_role,
                status=str(result["status"]),
                summary=str(result["summary"]),
                result=result,
                role=parent.role,
                job_id=job.job_id,
            )
        )


def _scope_in(scope: TurnScope, worktree: Path) -> TurnScope:
    """``scope`` moved into ``worktree``: the same folder below the root, when it exists."""
    try:
        below = scope.cwd.relative_to(scope.project_root)
    except ValueError:
        below = Path()
    cwd = worktree / below
    return replace(scope, cwd=cwd if cwd.is_dir() else worktree, root=worktree)
