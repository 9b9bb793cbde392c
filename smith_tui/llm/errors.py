"""The one exception type of the LLM package and the rules that classify it.

Every failure - bad input, transport trouble, an HTTP error status, an error
payload inside a 200 stream, cancellation - surfaces as :class:`LLMError` with
a stable ``kind`` and ``code``. The turn layer decides about retries from
``retryable``; this package never retries on its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Final, Literal

from smith_tui.errors import SmithError
from smith_tui.llm.secret import redact

# kinds
LLMErrorKind = Literal["transport", "http", "provider", "protocol", "schema", "cancelled"]
TRANSPORT: Final = "transport"  # connect / read / timeout / stall / dropped connection
HTTP: Final = "http"  # the server answered with a non-2xx status
PROVIDER: Final = "provider"  # an error payload inside a 200 response or stream
PROTOCOL: Final = "protocol"  # the bytes do not follow the protocol, or a bad transcript order
SCHEMA: Final = "schema"  # the caller's request / config / message shape is invalid
CANCELLED: Final = "cancelled"  # the caller's cancel token fired

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
CONTEXT_OVERFLOW = "context_overflow"
"""The code of a request the server refused because it does not fit the model's context."""
_OVERFLOW_STATUSES = frozenset({400, 413, 422})
# How real servers word a context-length refusal (matched on the lower-cased code + message):
# OpenAI / Groq code, OpenAI / vLLM / OpenRouter / DeepSeek message, Anthropic-compatible,
# llama.cpp (message and error type), Mistral, Gemini's OpenAI endpoint, Ollama.
_OVERFLOW_PHRASES = (
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "exceeds the available context size",
    "exceed_context_size",
    "context window",
    "reduce the length of the messages",
    "exceeds the maximum number of tokens",
    "input is too long",
    "too many tokens",
    "context length exceeded",
)
# A 413 "request too large" can also be a tokens-per-minute rate limit (Groq): not an overflow.
_NOT_OVERFLOW_PHRASES = ("per minute", "rate limit", "rate_limit", "tpm")
_RETRYABLE_PROVIDER_WORDS = ("rate_limit", "overloaded", "server_error", "timeout", "unavailable")
_MAX_MESSAGE = 2000


def status_is_retryable(status: int) -> bool:
    """HTTP 408/409/425/429 and every 5xx are worth retrying; other statuses are not."""
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def is_context_overflow(*texts: Any) -> bool:
    """Whether a provider's error code / message says the prompt does not fit the context."""
    text = " ".join(str(t) for t in texts if t is not None).lower()
    if not text or any(phrase in text for phrase in _NOT_OVERFLOW_PHRASES):
        return False
    return any(phrase in text for phrase in _OVERFLOW_PHRASES)


def default_retryable(kind: str, code: str) -> bool:
    """The retry classification of docs/DESIGN.md §3.4 for a kind/code pair."""
    if kind == TRANSPORT:
        return True
    if kind == HTTP and code.startswith("http_"):
        try:
            return status_is_retryable(int(code[5:]))
        except ValueError:
            return False
    return False


class LLMError(SmithError):
    """A normalised LLM failure.

    Attributes:
        kind: broad class (``transport``, ``http``, ``provider``, ``protocol``,
            ``schema``, ``cancelled``).
        code: stable machine code such as ``http_429`` or ``stream_stalled``.
        message: human readable explanation (never contains the API key).
        retryable: whether the turn layer may retry the call.
        origin: the stage that failed (``request``, ``connect``, ``response``,
            ``stream``, ``catalog``).
        data: extra structured detail (provider error body, status, ...).
        cause: the underlying exception, if any.
        retry_after: seconds from a ``Retry-After`` header, if the server sent one.
    """

    def __init__(
        self,
        kind: LLMErrorKind,
        code: str,
        message: str,
        *,
        retryable: bool | None = None,
        origin: str = "client",
        data: Any = None,
        cause: BaseException | None = None,
        retry_after: float | None = None,
    ) -> None:
        message = redact(str(message))
        if len(message) > _MAX_MESSAGE:
            message = message[:_MAX_MESSAGE] + "…"
        super().__init__(message, code=code)
        self.kind = kind
        self.retryable = default_retryable(kind, code) if retryable is None else retryable
        self.origin = origin
        self.data = redact(data)
        self.cause = cause
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"

    def __repr__(self) -> str:
        return (
            f"LLMError(kind={self.kind!r}, code={self.code!r}, message={self.message!r}, "
            f"retryable={self.retryable!r})"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly view (for events, logs and persistence)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "origin": self.origin,
        }
        if self.data is not None:
            out["data"] = self.data
        if self.retry_after is not None:
            out["retry_after"] = self.retry_after
        if self.cause is not None:
            out["cause"] = type(self.cause).__name__
        return out


def schema_error(message: str, *, code: str = "schema_invalid", data: Any = None) -> LLMError:
    """A caller mistake found before any byte was sent."""
    return LLMError(SCHEMA, code, message, origin="request", data=data)


def protocol_error(message: str, *, code: str = "protocol_invalid", data: Any = None) -> LLMError:
    """A transcript order or wire-format violation."""
    return LLMError(PROTOCOL, code, message, origin="request", data=data)


def cancelled_error(origin: str = "client") -> LLMError:
    """The caller's cancel token fired."""
    return LLMError(CANCELLED, "cancelled", "the request was cancelled", origin=origin)


def truncated_error(chunks: int) -> LLMError:
    """The body ended cleanly but early: no choice finished and no ``[DONE]`` came.

    Retryable like a dropped connection: the answer is incomplete, whatever it says.
    """
    return LLMError(
        TRANSPORT,
        "stream_truncated",
        "the stream ended before the answer was complete "
        f"(no finish_reason and no [DONE] after {chunks} chunk{'s' if chunks != 1 else ''})",
        origin="stream",
        data={"chunks": chunks},
    )


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        import email.utils  # an HTTP date: rare, and the email package is 15 modules

        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds)


def _provider_message(payload: Any) -> tuple[str | None, Any]:
    """Pull (message, provider_code) out of the many error-body shapes."""
    if isinstance(payload, Mapping):
        err = payload.get("error", payload)
        if isinstance(err, str):
            return err, payload.get("code")
        if isinstance(err, Mapping):
            msg = err.get("message") or err.get("msg") or err.get("detail") or err.get("error")
            code = err.get("code", err.get("type"))
            if msg is not None and not isinstance(msg, str):
                msg = json.dumps(msg, ensure_ascii=False)
            return msg, code
        detail = payload.get("detail") or payload.get("message")
        if isinstance(detail, str):
            return detail, payload.get("code")
    return None, None


def _error_type(payload: Any) -> Any:
    """The ``error.type`` of an error body (llama.cpp names the overflow there), if any."""
    if isinstance(payload, Mapping):
        err = payload.get("error")
        if isinstance(err, Mapping):
            return err.get("type")
    return None


def error_from_http(
    status: int, body: bytes | str, headers: Mapping[str, str] | None = None
) -> LLMError:
    """Normalise a non-2xx HTTP answer into ``http_<status>``.

    A 400/413/422 whose body says the prompt does not fit the model's context gets the code
    :data:`CONTEXT_OVERFLOW` instead (not retryable as is: the request must shrink).
    """
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    payload: Any = None
    try:
        payload = json.loads(text) if text.strip() else None
    except ValueError:
        payload = None
    provider_msg, provider_code = _provider_message(payload)
    detail = provider_msg or text.strip()[:500] or "no response body"
    retry_after = parse_retry_after((headers or {}).get("retry-after"))
    data: dict[str, Any] = {"status": status}
    if provider_code is not None:
        data["provider_code"] = provider_code
    data["body"] = payload if payload is not None else text[:2000]
    overflow = status in _OVERFLOW_STATUSES and is_context_overflow(
        provider_code, _error_type(payload), detail
    )
    return LLMError(
        HTTP,
        CONTEXT_OVERFLOW if overflow else f"http_{status}",
        f"HTTP {status}: {detail}",
        origin="response",
        data=data,
        retry_after=retry_after,
    )


def error_from_payload(
    payload: Any,
    *,
    event: str | None = None,
    code: str = "stream_error",
    origin: str = "stream",
) -> LLMError:
    """Normalise an error carried inside a 200 response or an SSE stream.

    An error that says the prompt does not fit the context gets the code
    :data:`CONTEXT_OVERFLOW` and is not retryable.
    """
    provider_msg, provider_code = _provider_message(payload)
    status: Any = None
    if isinstance(payload, Mapping):
        err = payload.get("error")
        if isinstance(err, Mapping):
            status = err.get("status_code", err.get("status"))
    if status is None and isinstance(provider_code, int):
        status = provider_code
    if isinstance(status, int):
        retryable = status_is_retryable(status)
    elif isinstance(provider_code, str):
        lowered = provider_code.lower()
        retryable = any(word in lowered for word in _RETRYABLE_PROVIDER_WORDS)
    else:
        # an upstream failure with no code at all is most often transient
        retryable = True
    message = provider_msg or (
        payload if isinstance(payload, str) else "provider reported an error"
    )
    code_part = f" (code {provider_code})" if provider_code is not None else ""
    data = {"provider_code": provider_code, "status": status, "payload": payload}
    if is_context_overflow(provider_code, _error_type(payload), provider_msg):
        code, retryable = CONTEXT_OVERFLOW, False
    if event:
        data["event"] = event
    return LLMError(
        PROVIDER,
        code,
        f"provider error{code_part}: {message}",
        retryable=retryable,
        origin=origin,
        data=data,
    )
