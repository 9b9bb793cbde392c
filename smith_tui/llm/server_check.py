"""What a Chat-Completions server actually does, asked with three small requests.

``smith doctor`` and the welcome screen use this to tell a user, before the first real turn,
whether their server streams, returns tool calls, reports usage in the stream, sends
reasoning (and under which field) and honours ``max_tokens``. The requests go through the
one client every turn uses (:class:`~smith_tui.llm.client.LLMClient`), so what is found is
what a turn would meet; the raw stream chunks it keeps are read for the field names.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from smith_tui.llm.catalog import ModelDescriptor
from smith_tui.llm.client import LLMClient
from smith_tui.llm.errors import LLMError
from smith_tui.llm.types import ChatRequest, ChatResponse

PROBE_TOOL = "smith_doctor_echo"
"""The one tool offered by the tool probe."""

PROBE_WORD = "ping"
LIMIT_TOKENS = 8
"""``max_tokens`` of the limit probe, which asks for a much longer answer."""

_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": PROBE_TOOL,
        "description": "Echo a word back. Call it when asked to.",
        "parameters": {
            "type": "object",
            "properties": {"word": {"type": "string", "description": "The word to echo."}},
            "required": ["word"],
        },
    },
}

_TOOL_PROMPT = (
    f"Call the tool {PROBE_TOOL} with the argument word set to {PROBE_WORD!r}. "
    "Do not answer in text."
)
_LIMIT_PROMPT = "Write the whole numbers from 1 to 400, separated by spaces, and nothing else."


@dataclass(frozen=True)
class StreamTraits:
    """What one streamed reply showed, read from its raw chunks."""

    chunks: int
    """SSE data payloads received (1 for a server that answers a stream in one piece)."""
    text_chars: int
    reasoning_fields: tuple[str, ...]
    """Where reasoning came: ``reasoning_content``, ``reasoning``, ``reasoning_details``,
    ``<think> in content`` or ``harmony channels in content``."""
    tool_calls: tuple[str, ...]
    """Names of the tool calls the reply made."""
    tool_arguments: tuple[Any, ...]
    """Each call's arguments decoded from JSON (``None`` where they are not JSON)."""
    usage_chunks: int
    """Chunks that carried a ``usage`` object."""
    finish_reason: str | None
    output_tokens: int | None

    @property
    def streamed(self) -> bool:
        """Whether the reply came as more than one chunk."""
        return self.chunks > 1

    @property
    def usage_in_stream(self) -> bool:
        """Whether some chunk reported token usage."""
        return self.usage_chunks > 0


def _decoded(raw: Any) -> list[dict[str, Any]]:
    items = raw if isinstance(raw, list) else [raw] if raw is not None else []
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict):
            out.append(item)
            continue
        try:
            value = json.loads(item)
        except (TypeError, ValueError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _fields_of(chunk: dict[str, Any], found: dict[str, None]) -> None:
    choices = chunk.get("choices")
    for choice in choices if isinstance(choices, list) else []:
        if not isinstance(choice, dict):
            continue
        delta: dict[str, Any] = {}
        for key in ("delta", "message"):
            if isinstance(choice.get(key), dict):
                delta = choice[key]
                break
        for name in ("reasoning_content", "reasoning", "reasoning_details"):
            if delta.get(name):
                found[name] = None
        content = delta.get("content")
        if isinstance(content, str):
            if "<think>" in content:
                found["<think> in content"] = None
            if "<|channel|>" in content:
                found["harmony channels in content"] = None


def stream_traits(response: ChatResponse) -> StreamTraits:
    """Read what a reply showed from its normalised form and its raw chunks."""
    chunks = _decoded(response.raw)
    fields: dict[str, None] = {}
    for chunk in chunks:
        _fields_of(chunk, fields)
    if response.reasoning and not fields:
        fields["reasoning (field not seen in the chunks)"] = None
    arguments: list[Any] = []
    for call in response.tool_calls:
        try:
            arguments.append(json.loads(call.arguments or "{}"))
        except (TypeError, ValueError):
            arguments.append(None)
    usage = response.usage
    return StreamTraits(
        chunks=len(chunks),
        text_chars=len(response.content or ""),
        reasoning_fields=tuple(fields),
        tool_calls=tuple(call.name or "" for call in response.tool_calls),
        tool_arguments=tuple(arguments),
        usage_chunks=sum(1 for chunk in chunks if isinstance(chunk.get("usage"), dict)),
        finish_reason=response.finish_reason,
        output_tokens=usage.output_tokens if usage is not None else None,
    )


@dataclass
class ServerCheck:
    """Everything the three requests found; ``None`` where a step could not run."""

    url: str
    models: list[ModelDescriptor] | None = None
    models_error: str | None = None
    model: str | None = None
    model_source: str = ""
    """Why this model: ``configured``, ``first listed`` or ``given``."""
    tool_probe: StreamTraits | None = None
    tool_error: str | None = None
    limit_probe: StreamTraits | None = None
    limit_error: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def descriptor(self) -> ModelDescriptor | None:
        """The catalog entry of the model the probes used, when the server listed it."""
        for model in self.models or []:
            if model.id == self.model:
                return model
        return None

    @property
    def tool_call_works(self) -> bool:
        """Whether the tool probe got the one call it asked for, with its argument."""
        probe = self.tool_probe
        return (
            probe is not None
            and PROBE_TOOL in probe.tool_calls
            and {"word": PROBE_WORD} in probe.tool_arguments
        )

    @property
    def max_tokens_honoured(self) -> bool | None:
        """Whether the limit probe stopped at ``max_tokens`` (``None``: cannot tell)."""
        probe = self.limit_probe
        if probe is None:
            return None
        if probe.finish_reason == "length":
            return True
        if probe.output_tokens is not None:
            return probe.output_tokens <= LIMIT_TOKENS + 2
        # No usage: 400 numbers are ~1,500 characters; a capped reply is a few words.
        return probe.text_chars <= LIMIT_TOKENS * 8


def _why(exc: BaseException) -> str:
    if isinstance(exc, LLMError):
        return exc.message
    return str(exc) or type(exc).__name__


async def _probe(
    client: LLMClient, request: ChatRequest, check: ServerCheck, step: str
) -> StreamTraits | str:
    started = time.monotonic()
    try:
        response = await client.chat_stream(request, {})
    except Exception as exc:  # every failure is a finding, never a crash
        return _why(exc)
    finally:
        check.seconds[step] = time.monotonic() - started
    return stream_traits(response)


async def check_server(
    client: LLMClient, url: str, *, model: str | None = None, configured: Sequence[str] = ()
) -> ServerCheck:
    """Ask the server for its models, then send the tool probe and the limit probe.

    ``model`` is used as given; else the first of ``configured`` that the server lists (or
    the first configured one when the list cannot be read), else the first listed model.
    """
    check = ServerCheck(url=url)
    started = time.monotonic()
    try:
        check.models = list(await client.list_models(refresh=True))
    except Exception as exc:
        check.models_error = _why(exc)
    check.seconds["models"] = time.monotonic() - started
    listed = [m.id for m in check.models or []]
    if model:
        check.model, check.model_source = model, "given"
    else:
        chosen = next((m for m in configured if m in listed), None)
        if chosen is None and configured and check.models is None:
            chosen = configured[0]
        if chosen is not None:
            check.model, check.model_source = chosen, "configured"
        elif listed:
            check.model, check.model_source = listed[0], "first listed"
    if check.model is None:
        return check
    tool = await _probe(
        client,
        ChatRequest(
            model=check.model,
            messages=[{"role": "user", "content": _TOOL_PROMPT}],
            tools=[_TOOL_SCHEMA],
            temperature=0,
            max_new_tokens=512,
        ),
        check,
        "tool",
    )
    if isinstance(tool, str):
        check.tool_error = tool
    else:
        check.tool_probe = tool
    limit = await _probe(
        client,
        ChatRequest(
            model=check.model,
            messages=[{"role": "user", "content": _LIMIT_PROMPT}],
            temperature=0,
            max_new_tokens=LIMIT_TOKENS,
        ),
        check,
        "limit",
    )
    if isinstance(limit, str):
        check.limit_error = limit
    else:
        check.limit_probe = limit
    return check
