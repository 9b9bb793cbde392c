"""Run a dispatch job as an isolated child turn (docs/DESIGN.md §5.7).

The child gets its own conversation (linked to the parent's), its own step
budget and a repeat guard, shares the parent's config and service handles,
and must end with ``report``. Its events carry the job id, so front ends can
show it in the dispatch tree; ``DispatchFinished`` carries the normalised
result the parent receives.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from smith_tui.dispatch.job import DispatchJob, child_prompt
from smith_tui.dispatch.result import ChildOutcome, dispatch_result
from smith_tui.engine import events as ev
from smith_tui.engine.errors import AgentError, AgentFailure, normalize
from smith_tui.engine.roles import resolve_role
from smith_tui.engine.turn import TurnResult, run_turn
from smith_tui.tools.spec import ToolContext

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime


def child_session_id(job: DispatchJob) -> str:
    """The session id of a child's isolated execution context."""
    return f"session-child-{job.job_id}"


class ChildRunner:
    """Runs child turns for the ``dispatch`` tool of one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def run(self, job: DispatchJob, parent: ToolContext) -> ChildOutcome:
        """Run ``job`` as an isolated child turn that must end with ``report``.

        Never raises for a failing child: every way it can end becomes a
        :class:`ChildOutcome`, and ``DispatchFinished`` is always emitted.
        """
        rt = self.runtime
        parent_job = parent.services.get("job_id") if parent.services else None
        rt.emit(
            ev.DispatchStarted(
                turn_id=parent.turn_id,
                target_role=job.target_role,
                task=job.task,
                parent_job_id=parent_job,
                role=parent.role,
                job_id=job.job_id,
            )
        )
        rt.jobs[job.job_id] = job
        try:
            outcome = await self._run_child_turn(job, parent)
        except asyncio.CancelledError:
            self._finished(job, parent, ChildOutcome("cancelled", None, {}))
            raise
        except Exception as exc:  # a broken child must not break the parent's loop
            error = normalize(exc)
            outcome = ChildOutcome("error", None, self._usage(job, {}), error=error.message)
        finally:
            rt.jobs.pop(job.job_id, None)
        self._finished(job, parent, outcome)
        return outcome

    def _usage(self, job: DispatchJob, before: dict[str, int]) -> dict[str, int]:
        now = self.runtime.usage.by_job.get(job.job_id, {})
        return {k: v - before.get(k, 0) for k, v in now.items()}

    async def _run_child_turn(self, job: DispatchJob, parent: ToolContext) -> ChildOutcome:
        rt = self.runtime
        active = rt.current_turn
        if active is None:
            raise AgentFailure(AgentError("internal", "no_turn", "dispatch outside a turn"))
        role_spec = resolve_role(job.target_role)
        conversation_id = rt.store.conversations.create(
            rt.project_id,
            f"{role_spec.alias}: {job.task[:60]}",
            parent_id=parent.conversation_id,
            metadata={
                "job_id": job.job_id,
                "session": child_session_id(job),
                "parent_turn_id": job.parent_turn_id,
                "role": role_spec.name,
            },
        )
        turn_id = f"{job.job_id}-t1"
        before = dict(rt.usage.by_job.get(job.job_id, {}))
        prompt = child_prompt(job)
        rt.emit(
            ev.TurnStarted(
                turn_id=turn_id,
                conversation_id=conversation_id,
                prompt=prompt,
                role=role_spec.name,
                job_id=job.job_id,
            )
        )
        try:
            rt.persistence.start_turn(conversation_id, role_spec.name, turn_id)
            selection = await rt.services.model.select(
                job.model, None, role_spec, active.context.config_snapshot
            )
            setup = rt.setup_for(
                active,
                role_spec,
                selection,
                job=job,
                conversation_id=conversation_id,
                turn_id=turn_id,
            )
            result = await run_turn(setup, [], {"role": "user", "content": prompt}, rt.deps())
        except Exception as exc:  # model selection, store: the child fails, the parent goes on
            result = TurnResult("error", error=normalize(exc))
        usage = self._usage(job, before)
        report = result.terminal.metadata.get("report") if result.terminal else None
        error_dict = result.error.to_dict() if result.error else None
        record: dict[str, Any] = {
            "turn_id": turn_id,
            "job_id": job.job_id,
            "role": role_spec.name,
            "session": child_session_id(job),
            "stop_reason": result.stop_reason,
            "rounds": result.rounds,
            "usage": usage,
        }
        try:
            rt.persistence.finish_turn(
                conversation_id, turn_id, result.stop_reason, error_dict, record
            )
        except Exception:  # the turn record is best effort; the result still reaches the parent
            pass
        rt.emit(
            ev.TurnFinished(
                turn_id=turn_id,
                conversation_id=conversation_id,
                stop_reason=result.stop_reason,  # type: ignore[arg-type]
                text=result.text,
                error=error_dict,
                usage=usage,
                role=role_spec.name,
                job_id=job.job_id,
            )
        )
        return ChildOutcome(
            stop_reason=result.stop_reason,
            report=report,
            usage=usage,
            conversation_id=conversation_id,
            error=result.error.message if result.error and not report else None,
            loop=result.loop_detected,
            text=result.text,
        )

    def _finished(self, job: DispatchJob, parent: ToolContext, outcome: ChildOutcome) -> None:
        result = dispatch_result(job, outcome)
        self.runtime.emit(
            ev.DispatchFinished(
                target_role=job.target_role,
                status=str(result["status"]),
                summary=str(result["summary"]),
                result=result,
                role=parent.role,
                job_id=job.job_id,
            )
        )
