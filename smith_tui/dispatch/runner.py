"""Run a dispatch job as an isolated child turn (seed: Worker).

The child gets its own conversation (linked to the parent's), its own step
budget and a repeat guard, shares the parent's config and service handles,
and must end with ``report``. Its events carry the job id, so front ends can
show it in the dispatch tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smith_tui.dispatch.job import DispatchJob, child_prompt
from smith_tui.dispatch.service import ChildOutcome
from smith_tui.engine import events as ev
from smith_tui.engine.errors import AgentError, AgentFailure, normalize
from smith_tui.engine.model_select import ModelSelectionError
from smith_tui.engine.roles import resolve_role
from smith_tui.engine.turn import TurnResult, run_turn
from smith_tui.tools.spec import ToolContext

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime


class ChildRunner:
    """Runs child turns for the ``dispatch`` tool of one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def run(self, job: DispatchJob, parent: ToolContext) -> ChildOutcome:
        """Run ``job`` as an isolated child turn that must end with ``report``."""
        rt = self.runtime
        active = rt.current_turn
        if active is None:
            raise AgentFailure(AgentError("internal", "no_turn", "dispatch outside a turn"))
        role_spec = resolve_role(job.target_role)
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
        conversation_id = rt.store.conversations.create(
            rt.project_id,
            f"{role_spec.alias}: {job.task[:60]}",
            parent_id=parent.conversation_id,
            metadata={"job_id": job.job_id, "session": f"session-child-{job.job_id}"},
        )
        turn_id = f"{job.job_id}-t1"
        before = dict(rt.usage.by_job.get(job.job_id, {}))
        outcome: ChildOutcome
        try:
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
            rt.persistence.start_turn(conversation_id, role_spec.name, turn_id)
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
            result = await run_turn(setup, [], {"role": "user", "content": prompt}, rt.deps())
        except (AgentFailure, ModelSelectionError) as exc:
            error = normalize(exc)
            result = TurnResult("error", error=error)
        usage = {k: v - before.get(k, 0) for k, v in rt.usage.by_job.get(job.job_id, {}).items()}
        report = result.terminal.metadata.get("report") if result.terminal else None
        error_dict = result.error.to_dict() if result.error else None
        try:
            rt.persistence.finish_turn(
                conversation_id,
                turn_id,
                result.stop_reason,
                error_dict,
                {"turn_id": turn_id, "job_id": job.job_id, "role": role_spec.name, "usage": usage},
            )
        except Exception:
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
        outcome = ChildOutcome(
            stop_reason=result.stop_reason,
            report=report,
            usage=usage,
            conversation_id=conversation_id,
            error=result.error.message if result.error and not report else None,
            loop=result.loop_detected,
        )
        status = report.get("status") if report else "blocked"
        summary = (report or {}).get("summary") or (
            outcome.loop or outcome.error or f"stopped without a report ({result.stop_reason})"
        )
        rt.emit(
            ev.DispatchFinished(
                target_role=job.target_role,
                status=str(status),
                summary=str(summary),
                result=dict(report or {}),
                role=parent.role,
                job_id=job.job_id,
            )
        )
        return outcome
