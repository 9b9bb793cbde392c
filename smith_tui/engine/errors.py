"""The canonical agent error (docs/DESIGN.md §5.10) and its normalisation."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from smith_tui.cancel import Cancelled
from smith_tui.errors import SmithError

ErrorKind = Literal[
    "transport",
    "protocol",
    "schema",
    "tool",
    "cancelled",
    "budget_exhausted",
    "policy",
    "persistence",
    "internal",
    "config",
    "http",
    "provider",
]
"""What went wrong. ``http`` (a non-2xx answer) and ``provider`` (an error payload from the
server) are the LLM client's own kinds, kept as they come (docs/LLM.md)."""

ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind))


def _kind(value: object) -> ErrorKind:
    """``value`` when it is one of :data:`ErrorKind`, else ``internal``."""
    return cast(ErrorKind, value) if isinstance(value, str) and value in ERROR_KINDS else "internal"


@dataclass(frozen=True)
class AgentError:
    """One error shape for the whole engine: ``{kind, code, message, retryable, origin, data, cause}``."""

    kind: ErrorKind
    code: str
    message: str
    retryable: bool = False
    origin: str = "engine"
    data: Any = None
    cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "kind": self.kind,
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "origin": self.origin,
            "data": self.data,
            "cause": self.cause,
        }


class UserRequestError(SmithError):
    """What the user asked the runtime for cannot be done as asked (a bad setting, an unknown
    conversation, a turn already running); the message says what to fix."""

    code = "user_request"


class AgentFailure(Exception):
    """An exception carrying an :class:`AgentError`."""

    def __init__(self, error: AgentError) -> None:
        super().__init__(error.message)
        self.error = error


def normalize(value: Any, *, origin: str = "engine") -> AgentError:
    """Coerce anything thrown or returned into an :class:`AgentError`.

    Strings become internal errors, the literal ``"cancelled"`` and cancellation
    exceptions become ``cancelled``, objects that already look like an agent error
    (``kind``/``code``/``message`` attributes, e.g. ``LLMError``) keep their fields,
    and partial dicts get defaults for what is missing.
    """
    if isinstance(value, AgentError):
        return value
    if isinstance(value, AgentFailure):
        return value.error
    if value == "cancelled" or isinstance(value, Cancelled | asyncio.CancelledError):
        return AgentError("cancelled", "cancelled", "the turn was cancelled", origin=origin)
    if isinstance(value, str):
        return AgentError("internal", "error", value, origin=origin)
    if isinstance(value, dict):
        return AgentError(
            kind=_kind(value.get("kind")),
            code=str(value.get("code") or "error"),
            message=str(value.get("message") or "unknown error"),
            retryable=bool(value.get("retryable", False)),
            origin=str(value.get("origin") or origin),
            data=value.get("data"),
            cause=value.get("cause"),
        )
    kind = getattr(value, "kind", None)
    code = getattr(value, "code", None)
    if isinstance(kind, str) and isinstance(code, str):
        cause = getattr(value, "cause", None)
        return AgentError(
            kind=_kind(kind),
            code=code,
            message=str(getattr(value, "message", None) or value),
            retryable=bool(getattr(value, "retryable", False)),
            origin=str(getattr(value, "origin", None) or origin),
            data=getattr(value, "data", None),
            cause=None if cause is None else str(cause),
        )
    if isinstance(value, BaseException):
        return AgentError(
            "internal",
            type(value).__name__,
            str(value) or type(value).__name__,
            origin=origin,
        )
    return AgentError("internal", "error", repr(value), origin=origin)
