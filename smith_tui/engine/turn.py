"""The tool loop of one turn (docs/DESIGN.md §5.5).

build model messages → context-window policy → model call with retries →
extract tool calls → execute them in order (budget and cancellation checked
before each) → append results → repeat. The assistant message is handed to the
recorder before its tools start and the results as soon as they are in, so a
crash loses at most the model reply in flight, and a call whose tool was
running is on record (repair answers it on resume).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from smith_tui.cancel import CancelToken
from smith_tui.engine import events as ev
from smith_tui.engine.errors import AgentError, AgentFailure, normalize
from smith_tui.engine.retry import Attempt, RetryPolicy, call_with_retries
from smith_tui.engine.usage import UsageTracker
from smith_tui.tools.executor import execute_tool_call
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolContext, ToolResult

WIRE_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})


class TurnRecorder(Protocol):
    """Where a turn persists what happens (implemented over the store)."""

    def user_message(self, setup: TurnSetup, message: dict[str, Any]) -> None:
        """Persist the user message that opened the turn."""

    def round(
        self,
        setup: TurnSetup,
        round_no: int,
        messages: list[dict[str, Any]],
        usage: dict[str, int] | None,
    ) -> None:
        """Persist one part of a round in one transaction.

        A round with tool calls arrives in two parts: the assistant message (with the
        round's ``usage``) before any tool starts, then its tool results (``usage`` None)
        once they all finished. A round without tool calls arrives whole.
        """

    def request_snapshot(
        self, setup: TurnSetup, model: str, system_prompt: str, tools: list[dict[str, Any]]
    ) -> None:
        """Keep the debug snapshot of one outgoing request."""


class NullRecorder(TurnRecorder):
    """A recorder that keeps nothing (used where persistence is not wanted)."""


@dataclass
class TurnSetup:
    """Everything fixed for the duration of one turn."""

    turn_id: str
    conversation_id: str
    role: str
    model: str
    system_prompt: str
    config: Mapping[str, Any]
    cancel: CancelToken
    cwd: Path
    context_window: int = 128_000
    max_output_tokens: int | None = None
    job_id: str | None = None
    usage_scope: tuple[str, str] | None = None
    """``(conversation_id, turn_id)`` usage is recorded under (the parent's, for a child turn)."""
    project_id: str | None = None
    project_root: Path | None = None
    services: Mapping[str, Any] = field(default_factory=dict)
    step_budget: int | None = None
    repeat_limit: int | None = None
    """Stop when the same tool call (name and arguments) repeats this many times in a row."""


@dataclass
class TurnDeps:
    """The collaborators of the loop."""

    llm: Any
    registry: ToolRegistry
    emit: Callable[[ev.Event], None]
    recorder: TurnRecorder = field(default_factory=NullRecorder)
    usage: UsageTracker = field(default_factory=UsageTracker)
    window: (
        Callable[[list[dict[str, Any]], Mapping[str, Any], int], list[dict[str, Any]]] | None
    ) = None
    now: Callable[[], datetime] = lambda: datetime.now().astimezone()
    snapshot: Callable[[datetime], dict[str, Any]] | None = None


@dataclass
class TurnResult:
    """How a turn ended."""

    stop_reason: str
    text: str = ""
    error: AgentError | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    terminal: ToolResult | None = None
    rounds: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    loop_detected: str | None = None


def to_wire(message: Mapping[str, Any]) -> dict[str, Any]:
    """Return the Chat-Completions part of a stored message (drops our own extras)."""
    wire = {k: v for k, v in message.items() if k in WIRE_KEYS}
    if wire.get("role") == "assistant" and not wire.get("tool_calls"):
        wire.pop("tool_calls", None)
    if wire.get("role") != "tool":
        wire.pop("tool_call_id", None)
    if wire.get("content") is None and wire.get("role") != "assistant":
        wire["content"] = ""
    return wire


def _summary(result: ToolResult) -> str:
    first = (result.error or result.content or "").strip().splitlines()
    line = first[0] if first else ""
    return line[:120]


class _StreamHandlers:
    """Forwards client stream callbacks to engine events."""

    def __init__(self, setup: TurnSetup, emit: Callable[[ev.Event], None], attempt: Attempt):
        self.setup = setup
        self.emit = emit
        self.attempt = attempt
        self.text: list[str] = []
        self._streaming = False

    def _mark(self) -> None:
        self.attempt.output_shown = True
        if not self._streaming:
            self._streaming = True
            self.emit(
                ev.StatusChanged(status="streaming", role=self.setup.role, job_id=self.setup.job_id)
            )

    def on_text(self, delta: str) -> None:
        if not delta:
            return
        self._mark()
        self.text.append(delta)
        self.emit(
            ev.TextDelta(
                turn_id=self.setup.turn_id,
                text=delta,
                role=self.setup.role,
                job_id=self.setup.job_id,
            )
        )

    def on_reasoning(self, delta: str) -> None:
        if not delta:
            return
        self._mark()
        self.emit(
            ev.ReasoningDelta(
                turn_id=self.setup.turn_id,
                text=delta,
                role=self.setup.role,
                job_id=self.setup.job_id,
            )
        )

    def on_tool_delta(self, delta: Any) -> None:
        self._mark()

    def on_usage(self, usage: Any) -> None:
        pass

    def on_error(self, error: Any) -> None:
        pass

    def on_done(self, response: Any) -> None:
        pass


def _response_parts(response: Any) -> tuple[str, str, list[dict[str, Any]], Any, Any]:
    """Return (content, reasoning, tool_calls as wire dicts, usage, reasoning_details)."""
    message = response.message
    content = getattr(message, "content", None) or ""
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        calls.append(
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name or "", "arguments": call.arguments or ""},
            }
        )
    return (
        content,
        getattr(response, "reasoning", "") or "",
        calls,
        getattr(response, "usage", None),
        getattr(response, "reasoning_details", None),
    )


def _is_empty(response: Any) -> bool:
    content, _, calls, _, _ = _response_parts(response)
    return not content.strip() and not calls


async def run_turn(
    setup: TurnSetup,
    history: Sequence[dict[str, Any]],
    user_message: dict[str, Any] | None,
    deps: TurnDeps,
) -> TurnResult:
    """Run the tool loop until completion, cancellation, error or budget exhaustion."""
    emit = deps.emit
    role, job = setup.role, setup.job_id
    transcript: list[dict[str, Any]] = list(history)
    added: list[dict[str, Any]] = []
    turn_usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    policy = RetryPolicy.from_config(setup.config)
    tools = deps.registry.llm_specs(role)
    steps_left = setup.step_budget
    repeat_key: str | None = None
    repeat_count = 0
    round_no = 0

    def result(stop: str, text: str = "", error: AgentError | None = None, **kw: Any) -> TurnResult:
        status = {"completed": "idle", "cancelled": "cancelled"}.get(stop, "error")
        emit(ev.StatusChanged(status=status, role=role, job_id=job))  # type: ignore[arg-type]
        return TurnResult(stop, text, error, added, rounds=round_no, usage=dict(turn_usage), **kw)

    if user_message is not None:
        transcript.append(user_message)
        added.append(user_message)
        deps.recorder.user_message(setup, user_message)

    last_text = ""
    while True:
        if setup.cancel.is_cancelled():
            return result("cancelled", last_text, normalize("cancelled"))
        round_no += 1
        emit(ev.StatusChanged(status="thinking", role=role, job_id=job))
        # The system prompt shares the window: budget the transcript with what is left.
        budget = max(1, setup.context_window - len(setup.system_prompt) // 4)
        window_input = deps.window(transcript, setup.config, budget) if deps.window else transcript
        wire = [{"role": "system", "content": setup.system_prompt}]
        wire.extend(to_wire(m) for m in window_input)
        if deps.snapshot is not None:
            wire.append(deps.snapshot(deps.now()))
        deps.recorder.request_snapshot(setup, setup.model, setup.system_prompt, tools)

        partial: list[str] = []

        async def call(
            attempt: Attempt,
            wire: list[dict[str, Any]] = wire,
            partial: list[str] = partial,
        ) -> Any:
            emit(
                ev.LLMRequestStarted(
                    turn_id=setup.turn_id,
                    model=setup.model,
                    attempt=attempt.number,
                    role=role,
                    job_id=job,
                )
            )
            handlers = _StreamHandlers(setup, emit, attempt)
            request = {
                "model": setup.model,
                "messages": wire,
                "stream": True,
                "cancel": setup.cancel,
            }
            if tools:
                request["tools"] = tools
            if setup.max_output_tokens:
                request["max_new_tokens"] = setup.max_output_tokens
            partial[:] = []
            handlers.text = partial
            return await deps.llm.chat_stream(request, handlers)

        def on_retry(layer: str, attempt: int, delay: float, reason: str) -> None:
            emit(
                ev.RetryScheduled(
                    turn_id=setup.turn_id,
                    attempt=attempt,
                    delay_s=delay,
                    reason=reason,
                    layer=layer,  # type: ignore[arg-type]
                    role=role,
                    job_id=job,
                )
            )

        def on_reset(reason: str) -> None:
            emit(ev.StreamReset(turn_id=setup.turn_id, reason=reason, role=role, job_id=job))

        try:
            response = await call_with_retries(
                call, _is_empty, policy, setup.cancel, on_retry, on_reset
            )
        except (AgentFailure, asyncio.CancelledError) as exc:
            error = normalize(exc)
            shown = "".join(partial)
            if shown.strip():
                message = {
                    "role": "assistant",
                    "content": shown,
                    "metadata": {"partial": True, "stop": error.code},
                }
                transcript.append(message)
                added.append(message)
                deps.recorder.round(setup, round_no, [message], None)
            if isinstance(exc, asyncio.CancelledError) or error.kind == "cancelled":
                if not isinstance(exc, asyncio.CancelledError):
                    return result("cancelled", shown or last_text, error)
                result("cancelled", shown or last_text, error)
                raise
            return result("error", shown or last_text, error)

        content, reasoning, calls, usage, details = _response_parts(response)
        calls = _unique_call_ids(calls, transcript)
        counts = deps.usage.add(role, usage, job_id=job)
        for key, value in counts.items():
            turn_usage[key] += value
        emit(
            ev.UsageUpdated(
                turn_id=setup.turn_id,
                model=setup.model,
                delta=counts,
                totals=deps.usage.totals(),
                context_tokens=counts["input_tokens"] + counts["output_tokens"],
                context_window=setup.context_window,
                role=role,
                job_id=job,
            )
        )
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        broken: dict[str, str] = {}
        if calls:
            assistant["tool_calls"], broken = _transcript_calls(calls)
        if reasoning:
            assistant["reasoning"] = reasoning
        if details:
            assistant["metadata"] = {"reasoning_details": details}
        if broken:
            assistant.setdefault("metadata", {})["raw_arguments"] = broken
        emit(
            ev.AssistantMessage(
                turn_id=setup.turn_id,
                content=content,
                reasoning=reasoning,
                tool_calls=calls,
                role=role,
                job_id=job,
            )
        )
        last_text = content or last_text
        # The assistant message goes on record before any of its tools starts: if the
        # process dies while a tool runs, the stored call is an orphan that repair answers
        # on resume (it may have had effects) instead of a call that never happened.
        transcript.append(assistant)
        added.append(assistant)
        deps.recorder.round(setup, round_no, [assistant], counts)
        if not calls:
            return result("completed", content)

        outcome = await _run_calls(setup, deps, calls, steps_left, repeat_key, repeat_count)
        repeat_key, repeat_count = outcome.repeat_key, outcome.repeat_count
        if steps_left is not None:
            steps_left -= outcome.steps_used
        stop, terminal = outcome.stop, outcome.terminal
        tool_messages = []
        for call_dict, res in zip(calls, outcome.results, strict=True):
            message = {
                "role": "tool",
                "tool_call_id": call_dict["id"],
                "name": res.name,
                "content": res.content,
                "metadata": {
                    "ok": res.ok,
                    "duration_s": round(res.duration_s, 3),
                    "mutation_state": res.mutation_state,
                    **({"cancelled": True} if res.cancelled else {}),
                },
            }
            recall_key = res.metadata.get("recall_key")
            if recall_key:
                message["recall_key"] = recall_key
            tool_messages.append(message)
        transcript.extend(tool_messages)
        added.extend(tool_messages)
        deps.recorder.round(setup, round_no, tool_messages, None)

        if stop == "cancelled":
            return result("cancelled", last_text, normalize("cancelled"))
        if terminal is not None:
            return result("completed", last_text, None, terminal=terminal)
        if stop == "budget_exhausted":
            return result(
                "budget_exhausted",
                last_text,
                AgentError(
                    "budget_exhausted",
                    "budget_exhausted",
                    f"the tool step budget ({setup.step_budget}) is used up",
                ),
            )
        if stop == "loop":
            return result(
                "error",
                last_text,
                AgentError("policy", "repeated_tool_call", outcome.loop_message or "repeated call"),
                loop_detected=outcome.loop_message,
            )


def _unique_call_ids(
    calls: list[dict[str, Any]], transcript: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Rename a call whose id an earlier message already used (some servers start their ids
    from zero in every reply): a transcript that repeats an id is refused by every request
    after it."""
    if not calls:
        return calls
    used = {
        call.get("id")
        for message in transcript
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
    }
    for call in calls:
        base = call["id"]
        suffix = 0
        while call["id"] in used:
            suffix += 1
            call["id"] = f"{base}_{suffix}"
        used.add(call["id"])
    return calls


def _transcript_calls(
    calls: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The calls as the transcript keeps them, and the raw arguments of the broken ones.

    Arguments that are not a JSON object (cut-off or malformed JSON from the model) are
    kept as ``"{}"``: strict providers refuse a request whose history holds them. The tool
    still ran with the raw text and answered with the parse error, and the raw text stays
    in the message metadata.
    """
    kept: list[dict[str, Any]] = []
    broken: dict[str, str] = {}
    for call in calls:
        arguments = call["function"]["arguments"]
        try:
            valid = isinstance(json.loads(arguments or "{}"), dict)
        except (TypeError, ValueError):
            valid = False
        if valid:
            kept.append(call)
            continue
        broken[call["id"]] = arguments
        kept.append({**call, "function": {**call["function"], "arguments": "{}"}})
    return kept, broken


def _repeat_key(call: dict[str, Any]) -> str:
    """Identify a call by name and arguments (JSON arguments compared by value)."""
    arguments = call["function"]["arguments"]
    try:
        arguments = json.dumps(json.loads(arguments), sort_keys=True)
    except (TypeError, ValueError):
        pass
    return json.dumps([call["function"]["name"], arguments])


@dataclass
class _RoundOutcome:
    results: list[ToolResult]
    stop: str | None
    terminal: ToolResult | None
    loop_message: str | None
    repeat_key: str | None
    repeat_count: int
    steps_used: int


async def _run_calls(
    setup: TurnSetup,
    deps: TurnDeps,
    calls: list[dict[str, Any]],
    steps_left: int | None,
    repeat_key: str | None,
    repeat_count: int,
) -> _RoundOutcome:
    """Execute one round's calls in order; consecutive parallel tools run concurrently."""
    role, job = setup.role, setup.job_id
    results: list[ToolResult | None] = [None] * len(calls)
    stop: str | None = None
    terminal: ToolResult | None = None
    loop_message: str | None = None
    steps_used = 0
    max_parallel = int(
        ((setup.config.get("services") or {}).get("dispatch") or {}).get("max_parallel", 3) or 1
    )
    semaphore = asyncio.Semaphore(max(1, max_parallel))

    def placeholder(index: int, reason: str, code: str) -> ToolResult:
        call = calls[index]
        return ToolResult(
            call_id=call["id"],
            name=call["function"]["name"],
            ok=False,
            content=f"error: {reason}",
            error=reason,
            cancelled=code == "cancelled",
            metadata={"error_code": code},
        )

    async def run_one(index: int) -> ToolResult:
        call = calls[index]
        name = call["function"]["name"]
        arguments = call["function"]["arguments"]
        emit = deps.emit
        emit(
            ev.ToolCallStarted(
                turn_id=setup.turn_id,
                call_id=call["id"],
                name=name,
                arguments=arguments,
                role=role,
                job_id=job,
            )
        )
        emit(ev.StatusChanged(status="tool", detail=name, role=role, job_id=job))

        def on_output(text: str) -> None:
            emit(
                ev.ToolOutputDelta(
                    turn_id=setup.turn_id, call_id=call["id"], text=text, role=role, job_id=job
                )
            )

        ctx = ToolContext(
            role=role,
            turn_id=setup.turn_id,
            cwd=setup.cwd,
            cancel=setup.cancel.child(),
            config=setup.config,
            conversation_id=setup.conversation_id,
            project_id=setup.project_id,
            project_root=setup.project_root,
            services={**setup.services, "call_id": call["id"], "job_id": job},
            on_output=on_output,
        )
        async with semaphore:
            started = time.monotonic()
            res = await execute_tool_call(deps.registry, call["id"], name, arguments, ctx)
        emit(
            ev.ToolCallFinished(
                turn_id=setup.turn_id,
                call_id=call["id"],
                name=name,
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

    def is_parallel(index: int) -> bool:
        spec = deps.registry.get(calls[index]["function"]["name"])
        return spec is not None and spec.parallel

    def admit(index: int, planned: int) -> str | None:
        """Check one call before it runs; return why it may not run, or None."""
        nonlocal repeat_key, repeat_count, loop_message
        if setup.cancel.is_cancelled():
            return "cancelled"
        if steps_left is not None and planned >= steps_left:
            return "budget_exhausted"
        key = _repeat_key(calls[index])
        if key == repeat_key:
            repeat_count += 1
        else:
            repeat_key, repeat_count = key, 1
        if setup.repeat_limit and repeat_count >= setup.repeat_limit:
            loop_message = (
                f"stopped: {calls[index]['function']['name']} was called {repeat_count} times "
                "in a row with the same arguments"
            )
            results[index] = placeholder(index, loop_message, "repeated_call")
            return "loop"
        return None

    index = 0
    while index < len(calls):
        if stop is not None:
            reason = {
                "cancelled": ("the turn was cancelled before this call ran", "cancelled"),
                "budget_exhausted": (
                    "the tool step budget is used up; this call did not run",
                    "budget_exhausted",
                ),
                "loop": ("not run: the turn was stopped for repeating a call", "repeated_call"),
                "terminal": ("not run: the turn already ended with a terminal tool", "skipped"),
            }[stop]
            if results[index] is None:
                results[index] = placeholder(index, *reason)
            index += 1
            continue
        # A run of consecutive parallel calls forms one batch; any other call runs alone.
        # Every member passes the same checks (cancel, budget, repeat) as a lone call.
        batch: list[int] = []
        while index + len(batch) < len(calls):
            candidate = index + len(batch)
            if batch and not (is_parallel(batch[0]) and is_parallel(candidate)):
                break
            why = admit(candidate, steps_used + len(batch))
            if why is not None:
                stop = why
                break
            batch.append(candidate)
        if not batch:
            continue
        if len(batch) == 1:
            batch_results = [await run_one(batch[0])]
        else:
            batch_results = list(await asyncio.gather(*(run_one(i) for i in batch)))
        for i, res in zip(batch, batch_results, strict=True):
            results[i] = res
        steps_used += len(batch)
        index = batch[-1] + 1
        spec = deps.registry.get(calls[batch[0]]["function"]["name"])
        res = batch_results[0]
        if len(batch) == 1 and spec is not None and spec.is_terminal and res.ok and stop is None:
            terminal = res
            stop = "terminal"
        if setup.cancel.is_cancelled() and stop is None:
            stop = "cancelled"
    return _RoundOutcome(
        results=[r for r in results if r is not None],
        stop=None if stop == "terminal" else stop,
        terminal=terminal,
        loop_message=loop_message,
        repeat_key=repeat_key,
        repeat_count=repeat_count,
        steps_used=steps_used,
    )
