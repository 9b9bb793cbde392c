"""Value types exchanged with the LLM client: request, response, tool calls, usage."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, Required, TypedDict

from smith_tui.llm.errors import PROTOCOL, LLMError, schema_error
from smith_tui.llm.nesting import load_json

#: The roles a Chat-Completions message may have.
Role = Literal["system", "developer", "user", "assistant", "tool"]


class WireFunction(TypedDict):
    """The ``function`` part of a ``tool_calls[]`` entry; ``arguments`` is JSON text."""

    name: str
    arguments: str


class WireToolCall(TypedDict):
    """One ``tool_calls[]`` entry of an assistant message, as sent and as stored."""

    id: str
    type: Literal["function"]
    function: WireFunction


class WireMessage(TypedDict, total=False):
    """One Chat-Completions message as it goes out in ``ChatRequest.messages``.

    Which keys a message has depends on its ``role``: ``system``/``developer``/``user``
    carry ``content``; ``assistant`` carries ``content`` (``None`` when it only called
    tools) and ``tool_calls``; ``tool`` carries ``tool_call_id``, ``content`` and
    optionally ``name``. ``reasoning_content`` and ``reasoning_details`` are only for
    providers that want the model's reasoning echoed back
    (:meth:`ChatResponse.to_wire_message` with ``include_reasoning``). One TypedDict
    with optional keys rather than a union per role: callers read ``.get(...)`` on
    any message without narrowing first.
    """

    role: Required[Role]
    content: str | None
    tool_calls: list[WireToolCall]
    tool_call_id: str
    name: str
    reasoning_content: str
    reasoning_details: list[dict[str, Any]]


class CancelLike(Protocol):
    """Anything with ``is_cancelled()``; an ``async wait()`` makes cancelling instant."""

    def is_cancelled(self) -> bool:  # pragma: no cover - protocol
        """Return ``True`` once cancelled."""
        ...


@dataclass
class Usage:
    """Token counts normalised across providers (``None`` = not reported)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None
    cost: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict view."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_tokens": self.cached_tokens,
            "cost": self.cost,
        }


@dataclass
class ToolCall:
    """One tool call requested by the model.

    ``id`` is the provider's id (the wire ``tool_calls[].id``); ``call_id`` is
    the same value under the runtime's name; a tool result answers it with
    ``tool_call_id``. ``arguments`` is the raw JSON text as streamed.
    """

    id: str
    name: str
    arguments: str = ""

    @property
    def call_id(self) -> str:
        """Alias of :attr:`id` used by the runtime."""
        return self.id

    @property
    def is_valid(self) -> bool:
        """``False`` when the provider never sent a function name."""
        return bool(self.name)

    def parsed_arguments(self) -> dict[str, Any]:
        """Decode :attr:`arguments`; empty text means ``{}``.

        Raises :class:`LLMError` (code ``invalid_arguments``) when the text is
        not a JSON object, with a message the model can act on.
        """
        text = self.arguments.strip()
        if not text:
            return {}
        try:
            value = load_json(text)
        except ValueError as exc:
            raise LLMError(
                PROTOCOL,
                "invalid_arguments",
                f"arguments of tool call {self.name or '?'} ({self.id}) are not valid JSON: {exc}",
                origin="response",
                data={"arguments": self.arguments[:1000]},
            ) from None
        if not isinstance(value, dict):
            raise LLMError(
                PROTOCOL,
                "invalid_arguments",
                f"arguments of tool call {self.name or '?'} ({self.id}) must be a JSON object, "
                f"got {type(value).__name__}",
                origin="response",
                data={"arguments": self.arguments[:1000]},
            )
        return value

    def to_wire(self) -> WireToolCall:
        """The Chat-Completions ``tool_calls[]`` entry."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments or "{}"},
        }


@dataclass
class ToolCallDelta:
    """What ``on_tool_delta`` receives: one fragment of a streamed tool call.

    ``index`` is the call's position in the final message; ``id`` and ``name``
    are the values known so far (``id`` may still be ``None``); ``arguments``
    is only the new fragment.
    """

    index: int
    id: str | None
    name: str
    arguments: str


@dataclass
class ChatMessage:
    """The assistant message of a response."""

    role: str = "assistant"
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)


@dataclass
class ChatResponse:
    """A completed chat (streamed or not), already normalised.

    ``raw`` is, for a stream, the list of SSE data payloads as received (JSON
    text); for a non-streaming call, the decoded response body.
    """

    message: ChatMessage
    reasoning: str = ""
    reasoning_details: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    raw: Any = None
    model: str | None = None

    @property
    def content(self) -> str:
        """Shortcut for ``message.content``."""
        return self.message.content

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Shortcut for ``message.tool_calls``."""
        return self.message.tool_calls

    @property
    def valid_tool_calls(self) -> list[ToolCall]:
        """Tool calls that carry a function name (the ones that can be run)."""
        return [tc for tc in self.message.tool_calls if tc.is_valid]

    @property
    def invalid_tool_calls(self) -> list[ToolCall]:
        """Tool calls whose name never arrived."""
        return [tc for tc in self.message.tool_calls if not tc.is_valid]

    def to_wire_message(self, *, include_reasoning: bool = False) -> WireMessage:
        """The assistant message dict to append to the transcript.

        ``content`` is ``None`` when the model only called tools. With
        ``include_reasoning`` the reasoning text goes out as
        ``reasoning_content`` and the opaque ``reasoning_details`` are kept, for
        providers that want them echoed back.
        """
        msg: WireMessage = {"role": "assistant"}
        calls = self.message.tool_calls
        msg["content"] = self.message.content if (self.message.content or not calls) else None
        if calls:
            msg["tool_calls"] = [tc.to_wire() for tc in calls]
        if include_reasoning:
            if self.reasoning:
                msg["reasoning_content"] = self.reasoning
            if self.reasoning_details:
                msg["reasoning_details"] = [dict(d) for d in self.reasoning_details]
        return msg


Handler = Callable[..., Any]


@dataclass
class StreamHandlers:
    """Callbacks for :meth:`LLMClient.chat_stream`; plain or async, all optional."""

    on_text: Handler | None = None
    on_reasoning: Handler | None = None
    on_tool_delta: Handler | None = None
    on_usage: Handler | None = None
    on_error: Handler | None = None
    on_done: Handler | None = None


_HANDLER_NAMES = ("on_text", "on_reasoning", "on_tool_delta", "on_usage", "on_error", "on_done")


def coerce_handlers(handlers: Any) -> StreamHandlers:
    """Accept ``None``, a :class:`StreamHandlers`, a mapping or any object with ``on_*`` attributes."""
    if handlers is None:
        return StreamHandlers()
    if isinstance(handlers, StreamHandlers):
        return handlers
    if isinstance(handlers, Mapping):
        unknown = set(handlers) - set(_HANDLER_NAMES)
        if unknown:
            raise schema_error(
                f"unknown stream handler(s) {sorted(unknown)}; expected some of {list(_HANDLER_NAMES)}"
            )
        found = {name: handlers.get(name) for name in _HANDLER_NAMES}
    else:
        found = {name: getattr(handlers, name, None) for name in _HANDLER_NAMES}
    out = StreamHandlers(**found)
    for name in _HANDLER_NAMES:
        value = getattr(out, name)
        if value is not None and not callable(value):
            raise schema_error(f"stream handler {name} must be callable")
    return out


@dataclass
class ChatRequest:
    """What to ask the model.

    ``messages`` are Chat-Completions wire dicts (:class:`WireMessage`). ``max_new_tokens`` goes out
    as ``max_tokens``. ``cancel`` is any object with ``is_cancelled()`` (and
    optionally ``async wait()``). ``extra`` adds provider-specific body fields;
    a ``None`` value there removes a field (e.g. ``{"stream_options": None}``
    for servers that reject it).
    """

    model: str
    messages: Sequence[WireMessage]
    tools: Sequence[Mapping[str, Any]] | None = None
    tool_choice: Any = None
    stream: bool = False
    temperature: float | None = None
    max_new_tokens: int | None = None
    cancel: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
