"""Run one tool call and normalise its outcome (docs/DESIGN.md §5.6).

This is also the one place where API-key values are redacted from what a tool
produced (its result, error and live output), for every tool, before anything
is stored, sent to the model or shown.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

from smith_tui.cancel import Cancelled
from smith_tui.config.secrets import StreamRedactor, redact, redact_data, secret_values
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolResult


def _decode_arguments(raw: Any) -> dict[str, Any]:
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
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
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


def _cancelled_result(call_id: str, name: str, started: float, mutation: str) -> ToolResult:
    return ToolResult(
        call_id=call_id,
        name=name,
        ok=False,
        content="[cancelled] the tool call was cancelled before it finished",
        error="cancelled",
        cancelled=True,
        mutation_state=mutation,  # type: ignore[arg-type]
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

    The arguments are validated once, here, against the tool's ``Args`` model
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


async def _execute(
    registry: ToolRegistry,
    call_id: str,
    name: str,
    arguments: Any,
    ctx: ToolContext,
) -> ToolResult:
    started = time.monotonic()

    def error(message: str, code: str, mutation: str = "none") -> ToolResult:
        return ToolResult(
            call_id=call_id,
            name=name,
            ok=False,
            content=f"error: {message}",
            error=message,
            mutation_state=mutation,  # type: ignore[arg-type]
            metadata={"error_code": code},
            duration_s=time.monotonic() - started,
        )

    try:
        decoded = _decode_arguments(arguments)
        spec = registry.resolve(name, ctx.role)
        args = spec.parse_arguments(decoded)
    except ToolError as exc:
        return error(exc.message, exc.code)

    if ctx.is_cancelled():
        return _cancelled_result(call_id, name, started, "none")

    permissions = ctx.services.get("permissions")
    if permissions is not None:
        refusal = await permissions.check(name, args, ctx)
        if ctx.is_cancelled():
            return _cancelled_result(call_id, name, started, "none")
        if refusal is not None:
            return error(refusal, "permission_denied")

    checkpoint = ctx.services.get("checkpoint") if spec.changes_files else None
    if checkpoint is not None:
        await checkpoint()  # records the project's files once per turn; never raises

    mutation_if_cancelled = "unknown" if spec.mutating else "none"
    try:
        output = await spec.handler(args, ctx)
    except ToolError as exc:
        return error(exc.message, exc.code, "attempted" if spec.mutating else "none")
    except (Cancelled, asyncio.CancelledError):
        if ctx.is_cancelled():
            return _cancelled_result(call_id, name, started, mutation_if_cancelled)
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
        duration_s=time.monotonic() - started,
    )
    if ctx.is_cancelled():
        return replace(result, cancelled=True, ok=False, error=result.error or "cancelled")
    return result
