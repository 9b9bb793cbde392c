"""Run one tool call and normalise its outcome (docs/DESIGN.md §5.6).

This is also the one place where API-key values are redacted from what a tool
produced (its result, error and live output), for every tool, before anything
is stored, sent to the model or shown.
"""

from __future__ import annotations

import asyncio
import json
import time
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from smith_tui.cancel import Cancelled
from smith_tui.config.secrets import StreamRedactor, redact, redact_data, secret_values
from smith_tui.llm.nesting import NestingTooDeep, load_json
from smith_tui.llm.stream import MAX_MESSAGE_CHARS
from smith_tui.tools.args import check_argument_values
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import MutationState, ToolContext, ToolError, ToolOutput, ToolResult


def decode_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict: JSON text decoded (at most
    :data:`~smith_tui.llm.nesting.MAX_JSON_DEPTH` deep), empty text as ``{}``.

    Raises :class:`ToolError` (code ``invalid_arguments``) with a message the model
    can act on when they are not a JSON object.
    """
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if not isinstance(raw, str):
        raise ToolError(
            f"tool arguments must be a JSON object, got {type(raw).__name__}",
            code="invalid_arguments",
        )
    try:
        value = load_json(raw)
    except NestingTooDeep as exc:
        raise ToolError(
            f"tool arguments are {exc}; send a flat JSON object matching the tool's schema",
            code="invalid_arguments",
        ) from None
    except json.JSONDecodeError as exc:
        if len(raw) >= MAX_MESSAGE_CHARS:
            raise ToolError(
                f"tool arguments were cut at {MAX_MESSAGE_CHARS:,} characters, the most one "
                "reply may carry; send less at once (write a big file in parts)",
                code="invalid_arguments",
            ) from None
        raise ToolError(
            f"tool arguments are not valid JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}); send a JSON object matching the tool's schema",
            code="invalid_arguments",
        ) from None
    if not isinstance(value, dict):
        raise ToolError(
            f"tool arguments must be a JSON object, got {type(value).__name__}",
            code="invalid_arguments",
        )
    return value


def _cancelled_result(
    call_id: str, name: str, started: float, mutation: MutationState
) -> ToolResult:
    return ToolResult(
        call_id=call_id,
        name=name,
        ok=False,
        content="[cancelled] the tool call was cancelled before it finished",
        error="cancelled",
        cancelled=True,
        mutation_state=mutation,
        duration_s=time.monotonic() - started,
    )


def _redacted(result: ToolResult, secrets: tuple[str, ...]) -> ToolResult:
    if not secrets:
        return result
    return replace(
        result,
        content=redact(result.content, secrets),
        error=redact(result.error, secrets) if result.error is not None else None,
        metadata=redact_data(result.metadata, secrets),
    )


async def execute_tool_call(
    registry: ToolRegistry,
    call_id: str,
    name: str,
    arguments: Any,
    ctx: ToolContext,
) -> ToolResult:
    """Decode, resolve, validate, check cancellation, run, check again and normalise.

    No tool sees a NUL character in any string argument or arguments nested deeper
    than :data:`~smith_tui.llm.nesting.MAX_JSON_DEPTH` (:func:`check_argument_values`):
    those calls are answered with an error naming the argument. The arguments are validated once, here, against the tool's ``Args`` model
    (:meth:`ToolSpec.parse_arguments`); the handler gets the validated instance.
    Never raises for tool-level problems: bad JSON, bad arguments, unknown or
    denied tools, calls the ``permissions`` service refuses (it may ask the user
    first) and handler failures all become error results the model can read.
    The values of the API-key variables (``smith_tui.config.secrets``)
    never appear in the result or in the output passed to ``ctx.on_output``:
    they read ``***``.
    """
    secrets = secret_values(ctx.config)
    stream = None
    if secrets and ctx.on_output is not None:
        stream = StreamRedactor(secrets, ctx.on_output)
        ctx = replace(ctx, on_output=stream.feed)
    try:
        result = await _execute(registry, call_id, name, arguments, ctx)
    finally:
        if stream is not None:
            stream.flush()
    return _redacted(result, secrets)


class _CallClock:
    """When a running call started, moved later by the time permission questions under it
    (its own, and those of the sub-agents it dispatched) waited for the user."""

    __slots__ = ("started",)

    def __init__(self) -> None:
        self.started = time.monotonic()


_OPEN_CALLS: ContextVar[tuple[_CallClock, ...]] = ContextVar("smith_open_calls", default=())
"""The clocks of the tool calls running in this task, outermost first: a sub-agent's turn
runs inside its ``dispatch`` call (asyncio tasks copy the context), so its questions pause
that call's clock too."""


async def _execute(
    registry: ToolRegistry,
    call_id: str,
    name: str,
    arguments: Any,
    ctx: ToolContext,
) -> ToolResult:
    clock = _CallClock()
    token = _OPEN_CALLS.set((*_OPEN_CALLS.get(), clock))
    try:
        return await _execute_timed(registry, call_id, name, arguments, ctx, clock)
    finally:
        _OPEN_CALLS.reset(token)


async def _execute_timed(
    registry: ToolRegistry,
    call_id: str,
    name: str,
    arguments: Any,
    ctx: ToolContext,
    clock: _CallClock,
) -> ToolResult:
    def error(message: str, code: str, mutation: MutationState = "none") -> ToolResult:
        return ToolResult(
            call_id=call_id,
            name=name,
            ok=False,
            content=f"error: {message}",
            error=message,
            mutation_state=mutation,
            metadata={"error_code": code},
            duration_s=time.monotonic() - clock.started,
        )

    try:
        decoded = decode_arguments(arguments)
        spec = registry.resolve(name, ctx.role)
        check_argument_values(decoded)  # no NUL, no deep nesting, for every tool
        args = spec.parse_arguments(decoded)
    except ToolError as exc:
        return error(exc.message, exc.code)
    except RecursionError:  # a validator decoding a string argument's own JSON, unbounded
        return error(
            "an argument holds JSON nested too deeply to read; send flat arguments",
            "invalid_arguments",
        )

    if ctx.is_cancelled():
        return _cancelled_result(call_id, name, clock.started, "none")

    permissions = ctx.services.permissions
    if permissions is not None:
        asked = time.monotonic()
        refusal = await permissions.check(name, args, ctx)
        # The time a question waited for the user is not the tool's, nor the dispatch's
        # that ran this sub-agent: durations leave it out.
        waited = time.monotonic() - asked
        for open_call in _OPEN_CALLS.get():
            open_call.started += waited
        if ctx.is_cancelled():
            return _cancelled_result(call_id, name, clock.started, "none")
        if refusal is not None:
            return error(refusal, "permission_denied")

    checkpoint = ctx.services.checkpoint if spec.changes_files else None
    if checkpoint is not None:
        await checkpoint()  # records the project's files once per turn; never raises

    mutation_if_cancelled: MutationState = "unknown" if spec.mutating else "none"
    try:
        output = await spec.handler(args, ctx)
    except ToolError as exc:
        if exc.code == "cancelled" and ctx.is_cancelled():
            # The tool saw the cancel itself (bash before its command started): the same
            # cancelled result as a cancel caught here, not a tool error.
            return _cancelled_result(call_id, name, clock.started, mutation_if_cancelled)
        return error(exc.message, exc.code, "attempted" if spec.mutating else "none")
    except (Cancelled, asyncio.CancelledError):
        if ctx.is_cancelled():
            return _cancelled_result(call_id, name, clock.started, mutation_if_cancelled)
        raise
    except Exception as exc:  # a buggy tool must not take the turn down
        return error(
            f"{name} failed unexpectedly: {type(exc).__name__}: {exc}",
            "tool_crashed",
            mutation_if_cancelled,
        )

    if isinstance(output, str):
        output = ToolOutput(content=output, mutation_state="attempted" if spec.mutating else "none")
    result = ToolResult(
        call_id=call_id,
        name=name,
        ok=output.ok,
        content=output.content,
        error=output.error,
        mutation_state=output.mutation_state,
        metadata=dict(output.metadata),
        duration_s=time.monotonic() - clock.started,
    )
    if ctx.is_cancelled():
        return replace(result, cancelled=True, ok=False, error=result.error or "cancelled")
    return result
