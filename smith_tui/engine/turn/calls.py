"""The call runner: runs one round's tool calls, every one past the guards first.

Calls run in order; a run of consecutive parallel calls forms one batch that runs
concurrently (at most ``max_parallel`` at once), see :meth:`CallRunner._batches`. The
first :class:`~smith_tui.engine.turn.stop.Stop` (a guard's, a terminal tool's, a cancel
seen after a batch) ends the round: each call it did not run gets the stop's result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from smith_tui.engine import events as ev
from smith_tui.engine.hooks.hook_set import Asker
from smith_tui.engine.hooks.tool_calls import after_call, gate_call
from smith_tui.engine.turn.frame import Turn, TurnServices
from smith_tui.engine.turn.guards import Guards
from smith_tui.engine.turn.stop import Stop, not_run
from smith_tui.llm import ToolCall
from smith_tui.tools.executor import execute_tool_call
from smith_tui.tools.spec import ToolContext, ToolResult


@dataclass
class Round:
    """What running one round's calls came to: a result per call, and the stop if any."""

    calls: list[ToolCall]
    results: dict[int, ToolResult] = field(default_factory=dict)
    stop: Stop | None = None
    tripped: int | None = None
    """The index of the call the stop refused (a guard's stop)."""

    def in_order(self) -> list[ToolResult]:
        """One result per call, in call order (the stop's for those that did not run)."""
        out = []
        for index, call in enumerate(self.calls):
            result = self.results.get(index)
            if result is None:
                assert self.stop is not None  # only a stop leaves a call unrun
                result = self.stop.skipped(call, tripped=index == self.tripped)
            out.append(result)
        return out


def _summary(result: ToolResult) -> str:
    first = (result.error or result.content or "").strip().splitlines()
    line = first[0] if first else ""
    return line[:120]


class CallRunner:
    """Runs the tool calls of a turn's rounds through its guards."""

    def __init__(self, turn: Turn, services: TurnServices, guards: Guards) -> None:
        self.turn = turn
        self.services = services
        self.guards = guards
        self.semaphore = asyncio.Semaphore(turn.settings.max_parallel)

    async def run(self, calls: list[ToolCall]) -> Round:
        """Run one round's calls; every call gets a result, run or not."""
        round_ = Round(calls)
        for batch in self._batches(round_):
            ran = await self._run_batch([calls[i] for i in batch])
            round_.results.update(zip(batch, ran, strict=True))
            spec = self.services.registry.get(calls[batch[0]].name)
            first = ran[0]
            if round_.stop is not None:
                continue  # a guard already stopped the round after this batch
            if len(batch) == 1 and spec is not None and spec.is_terminal and first.ok:
                round_.stop = Stop.ended_by(first)
            elif self.turn.cancel.is_cancelled():
                round_.stop = Stop.cancelled()
        return round_

    def _batches(self, round_: Round) -> Iterator[list[int]]:
        """The round's calls (by index) in batches: consecutive parallel calls together,
        any other call alone. Each call is admitted by the guards as its batch forms; a
        refusal ends the round after the batch formed so far, and a stop set while a batch
        ran (``round_.stop``) ends it before the next."""
        batch: list[int] = []
        for index, call in enumerate(round_.calls):
            if batch and not (self._parallel(round_.calls[batch[0]]) and self._parallel(call)):
                yield batch
                batch = []
            if round_.stop is not None:
                return
            stop = self.guards.admit(call)
            if stop is not None:
                round_.stop, round_.tripped = stop, index
                break
            batch.append(index)
        if batch:
            yield batch

    def _parallel(self, call: ToolCall) -> bool:
        spec = self.services.registry.get(call.name)
        return spec is not None and spec.parallel

    async def _run_batch(self, batch: list[ToolCall]) -> list[ToolResult]:
        if len(batch) == 1:
            return [await self._run_one(batch[0])]
        return list(await asyncio.gather(*(self._run_one(call) for call in batch)))

    async def _run_one(self, call: ToolCall) -> ToolResult:
        turn, services, emit = self.turn, self.services, self.services.emit
        if turn.tools is not None and call.name not in turn.tools:
            reason = f"{call.name} is not offered in this turn (the command's allowed-tools)"
            return not_run(call, reason, "tool_not_offered")
        role, job = turn.role_name, turn.job_id
        emit(
            ev.ToolCallStarted(
                turn_id=turn.turn_id,
                call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                role=role,
                job_id=job,
            )
        )
        emit(ev.StatusChanged(status="tool", detail=call.name, role=role, job_id=job))
        hooks = services.hooks
        asker = Asker(role, job, turn.turn_id, call.id, turn.cancel)
        gate = await gate_call(hooks, call.name, call.arguments, asker) if hooks else None

        def on_output(text: str) -> None:
            emit(
                ev.ToolOutputDelta(
                    turn_id=turn.turn_id, call_id=call.id, text=text, role=role, job_id=job
                )
            )

        ctx = ToolContext(
            role=role,
            turn_id=turn.turn_id,
            cwd=turn.cwd,
            cancel=turn.cancel.child(),
            config=turn.config_model,
            conversation_id=turn.conversation_id,
            project_id=turn.scope.project_id,
            project_root=turn.scope.project_root,
            services=services,
            on_output=on_output,
            call_id=call.id,
            job_id=job,
            hook_permission=gate.permission if gate else None,
            turn=turn,
        )
        async with self.semaphore:
            started = time.monotonic()
            if gate is not None and gate.refusal is not None:
                res = not_run(call, gate.refusal, "hook_denied")
            else:
                res = await execute_tool_call(
                    services.registry, call.id, call.name, call.arguments, ctx
                )
                if gate is not None and hooks is not None:
                    res = await after_call(hooks, gate, res, asker)
        self.guards.finished(call, res)
        emit(
            ev.ToolCallFinished(
                turn_id=turn.turn_id,
                call_id=call.id,
                name=call.name,
                ok=res.ok,
                duration_s=res.duration_s or time.monotonic() - started,
                summary=_summary(res),
                content=res.content,
                error=res.error,
                cancelled=res.cancelled,
                metadata=res.metadata,
                role=role,
                job_id=job,
            )
        )
        return res
