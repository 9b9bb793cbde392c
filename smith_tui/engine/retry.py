"""Transport and empty-response retries around one model call (docs/DESIGN.md §3.4).

The two layers nest: the empty-response layer wraps the transport layer, so
with the defaults (2 and 2) the worst case is (2+1) × (2+1) = 9 calls. Backoff
sleeps are cancellable, ``Retry-After`` is honoured up to the largest backoff,
and a stream that already showed output is retried only when
``stream_retry_after_output`` is set (the front end is told to discard it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from smith_tui.cancel import CancelToken
from smith_tui.config.schema import SmithConfig
from smith_tui.engine.errors import AgentError, AgentFailure, normalize

_SCHEMA = SmithConfig.model_construct()


@dataclass(frozen=True)
class RetryPolicy:
    """The retry settings of one turn (defaults: the schema's)."""

    transport_max: int = _SCHEMA.llm_config.retry_max_retries
    transport_backoff_ms: Sequence[float] = tuple(_SCHEMA.llm_config.retry_backoff_ms)
    empty_max: int = _SCHEMA.empty_response_retry_max_retries
    empty_backoff_ms: Sequence[float] = tuple(_SCHEMA.empty_response_retry_backoff_ms)
    retry_after_output: bool = _SCHEMA.llm_config.stream_retry_after_output

    @classmethod
    def from_config(cls, config: SmithConfig) -> RetryPolicy:
        """The policy of a validated config."""
        llm = config.llm_config
        return cls(
            transport_max=llm.retry_max_retries,
            transport_backoff_ms=tuple(llm.retry_backoff_ms),
            empty_max=config.empty_response_retry_max_retries,
            empty_backoff_ms=tuple(config.empty_response_retry_backoff_ms),
            retry_after_output=llm.stream_retry_after_output,
        )


def backoff_s(schedule: Sequence[float], attempt: int) -> float:
    """Return the delay in seconds before retry number ``attempt`` (0-based)."""
    if not schedule:
        return 0.0
    return float(schedule[min(attempt, len(schedule) - 1)]) / 1000.0


class Attempt:
    """Per-attempt state the call function reports into (did output reach the user?)."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.output_shown = False


RetryNotice = Callable[[str, int, float, str], None]
"""``(layer, attempt, delay_s, reason)`` → None; called before each backoff sleep."""

R = TypeVar("R")


async def call_with_retries(
    call: Callable[[Attempt], Awaitable[R]],
    is_empty: Callable[[R], bool],
    policy: RetryPolicy,
    cancel: CancelToken,
    on_retry: RetryNotice,
    on_reset: Callable[[str], None],
) -> R:
    """Run ``call`` with both retry layers; returns the first non-empty response.

    Raises :class:`AgentFailure` with the last error when retries are exhausted,
    the error is not retryable, or the turn is cancelled (kind ``cancelled``).
    """
    counter = 0

    async def sleep_or_cancel(delay: float) -> None:
        if await cancel.sleep(delay):
            raise AgentFailure(AgentError("cancelled", "cancelled", "the turn was cancelled"))

    async def transport_layer() -> R:
        nonlocal counter
        for attempt_no in range(policy.transport_max + 1):
            counter += 1
            attempt = Attempt(counter)
            try:
                return await call(attempt)
            except AgentFailure:
                raise
            except Exception as exc:
                error = normalize(exc, origin="llm")
                if cancel.is_cancelled() or error.kind == "cancelled":
                    raise AgentFailure(
                        AgentError("cancelled", "cancelled", "the turn was cancelled")
                    ) from None
                last = attempt_no >= policy.transport_max
                blocked = attempt.output_shown and not policy.retry_after_output
                if not error.retryable or last or blocked:
                    raise AgentFailure(error) from None
                if attempt.output_shown:
                    on_reset(f"retrying after {error.code}")
                delay = backoff_s(policy.transport_backoff_ms, attempt_no)
                retry_after = getattr(exc, "retry_after", None)
                if isinstance(retry_after, int | float) and retry_after >= 0:
                    cap = max(policy.transport_backoff_ms, default=0) / 1000.0
                    delay = min(float(retry_after), cap)
                # The message already names what failed ("HTTP 429: …"): the code would repeat it.
                on_retry("transport", attempt_no + 1, delay, error.message)
                await sleep_or_cancel(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    for empty_no in range(policy.empty_max + 1):
        response = await transport_layer()
        if not is_empty(response):
            return response
        if empty_no < policy.empty_max:
            delay = backoff_s(policy.empty_backoff_ms, empty_no)
            on_retry("empty_response", empty_no + 1, delay, "the model returned an empty response")
            await sleep_or_cancel(delay)
    raise AgentFailure(
        AgentError(
            "protocol",
            "empty_response",
            f"the model returned no text and no tool calls {policy.empty_max + 1} times",
            origin="llm",
        )
    )
