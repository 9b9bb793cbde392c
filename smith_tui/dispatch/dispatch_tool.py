"""The ``dispatch`` tool: run a child role's turn and hand back its report.

The runtime supplies how a child turn runs (``run_child``) and how results are
kept (``save_note``); this module owns validation, the result shape and the
scratchpad write of ``dispatch/<job_id>`` (docs/DESIGN.md §5.7).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    create_model,
)

from smith_tui.dispatch.job import CHILD_ROLES, DispatchJob, build_job
from smith_tui.dispatch.result import ChildOutcome, dispatch_result
from smith_tui.engine.roles import UnknownRoleError, child_role_names, report_shape, resolve_role
from smith_tui.engine.turn import Turn
from smith_tui.tools.args import Flag, Text
from smith_tui.tools.spec import (
    MutationState,
    ToolArgs,
    ToolContext,
    ToolOutput,
    ToolSpec,
)

__all__ = [
    "ChildOutcome",
    "DispatchArgs",
    "DispatchService",
    "recall_key_for",
]

RunChild = Callable[[DispatchJob, ToolContext], Awaitable[ChildOutcome]]
SaveNote = Callable[[str, str, str], None]


_TARGET_HELP = "worker (Niobe) changes code; explorer (Link) reads and researches."


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _known_role(value: str) -> str:
    # Whether the caller may dispatch to it is build_job's check; here only that it exists.
    try:
        resolve_role(value)
    except UnknownRoleError:
        choices = ", ".join(child_role_names())
        raise ValueError(f"must be one of {choices}, got {value!r:.60}") from None
    return value


class DispatchContext(BaseModel):
    """What the child needs to know; transcript keys are kept for :func:`build_job` to refuse."""

    model_config = ConfigDict(extra="allow", frozen=True)

    user_request_summary: str = Field(description="The user's request, summarised for the child.")
    role_instructions: str | None = Field(
        None, description="Constraints and hints: what to touch, what to avoid."
    )


class DispatchArgs(ToolArgs):
    """Arguments of ``dispatch``.

    The shapes are checked here; :func:`build_job` checks what depends on the
    caller (which roles it may dispatch to, role aliases, raw transcripts).
    Unknown keys are kept so a pasted transcript can be named and refused.
    """

    model_config = ConfigDict(extra="allow")

    # Role aliases are accepted too (resolve_role); the schema offers the canonical names.
    target_role: Annotated[
        str,
        AfterValidator(_known_role),
        WithJsonSchema({"type": "string", "enum": list(CHILD_ROLES)}),
    ] = Field(description=_TARGET_HELP)
    task: Text = Field(
        description="What the child must do, self-contained: it cannot see this chat."
    )
    context: DispatchContext = Field(description="Structured context; do not paste the transcript.")
    files: Annotated[list[str], BeforeValidator(_as_list)] = Field(
        [], description="Paths the child should start from."
    )
    model: Text | None = Field(
        None, description="Optional model id for the child (default: the role's model)."
    )
    allow_raw_transcript: Flag = Field(
        False, description="Only when the child truly needs it: allow context.transcript."
    )
    worktree: Flag | None = Field(
        None,
        description=(
            "Run the child in its own git worktree (default: services.dispatch.worktree); its "
            "result names the branch and the diff, merged or dropped with the worktree tool."
        ),
    )


@functools.lru_cache(maxsize=8)
def args_for(targets: tuple[str, ...]) -> type[DispatchArgs]:
    """``DispatchArgs`` whose schema offers ``targets`` (the built-in children, then the
    sub-agents from agent files) as the values of ``target_role``."""
    if targets == CHILD_ROLES:
        return DispatchArgs
    target = Annotated[
        str,
        AfterValidator(_known_role),
        WithJsonSchema({"type": "string", "enum": list(targets)}),
    ]
    help_text = _TARGET_HELP + " The others are sub-agents from agent files (system prompt)."
    model: type[DispatchArgs] = create_model(
        "DispatchArgs",
        __base__=DispatchArgs,
        __doc__=DispatchArgs.__doc__,
        target_role=(target, Field(description=help_text)),
    )
    return model


def recall_key_for(job_id: str) -> str:
    """The scratchpad key a dispatch result is saved under."""
    return f"dispatch/{job_id}"


class DispatchService:
    """Builds the ``dispatch`` tool over a child-turn runner."""

    def __init__(
        self,
        run_child: RunChild,
        check_dispatch: Callable[[str, str], bool],
        save_note: SaveNote | None = None,
    ) -> None:
        self.run_child = run_child
        self.check_dispatch = check_dispatch
        self.save_note = save_note

    async def handle(self, args: DispatchArgs, ctx: ToolContext) -> ToolOutput:
        """The ``dispatch`` handler: build the job, run the child, persist, return its result."""
        job = build_job(
            args.model_dump(exclude_none=True),
            parent_role=ctx.role,
            parent_turn_id=ctx.turn_id,
            parent_cancel=ctx.cancel,
            check_dispatch=self.check_dispatch,
            parent_control=ctx.turn.control if isinstance(ctx.turn, Turn) else None,
        )
        outcome = await self.run_child(job, ctx)
        result = dispatch_result(job, outcome)
        content = json.dumps(result, sort_keys=True, ensure_ascii=False)
        metadata: dict[str, Any] = {"dispatch": result, "job_id": job.job_id}
        if outcome.conversation_id:
            metadata["child_conversation_id"] = outcome.conversation_id
        key = recall_key_for(job.job_id)
        if self.save_note is not None and ctx.conversation_id:
            try:
                self.save_note(ctx.conversation_id, key, content)
            except Exception as exc:  # best effort: a failed write never fails the dispatch
                metadata["persist_error"] = f"{type(exc).__name__}: {exc}"
            else:
                metadata["recall_key"] = key
        changes = report_shape(job.target_role) == "worker"
        mutation: MutationState = "attempted" if changes else "none"
        return ToolOutput(content=content, metadata=metadata, mutation_state=mutation)

    def tool(self, targets: Sequence[str] = CHILD_ROLES) -> ToolSpec[DispatchArgs]:
        """Return the ``dispatch`` tool spec offering ``targets`` as ``target_role``."""
        return ToolSpec(
            name="dispatch",
            description=(
                "Delegate a self-contained task to a sub-agent (worker: edits code and runs "
                "checks; explorer: reads code and the web) and get its structured report "
                "(status ok/partial/blocked, summary, changes/verification or "
                "findings/evidence). The sub-agent cannot see this conversation: say what "
                "it needs in task and context. Several dispatch calls in one message run in "
                "parallel. Each full result is also saved to the scratchpad under "
                "dispatch/<job_id>; read it back with recall."
            ),
            args=args_for(tuple(targets)),
            handler=self.handle,
            parallel=True,
            mutating=True,
        )
