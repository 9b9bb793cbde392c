"""Stream assembly: Chat-Completions chunks in, one :class:`ChatResponse` out.

Pure and synchronous (no I/O), so it can be driven by the HTTP client or by a
test straight from a recorded file. Every quirk it absorbs is listed in
docs/LLM.md; in short:

* only choice ``index == 0`` is assembled (``n > 1`` streams keep choice 0);
* ``finish_reason`` keeps the last non-null value; ``model`` the last non-empty;
* usage may come on any chunk (last wins), in a ``choices: []`` chunk, after
  the finish chunk, or only under ``x_groq.usage``;
* reasoning comes from ``reasoning_content``, ``reasoning`` or text entries of
  ``reasoning_details`` (used only when the delta has no plain reasoning
  string, so the same text is never counted twice); all ``reasoning_details``
  entries are merged by ``(type, index)`` and kept, opaque ones verbatim;
* ``<think>…</think>`` at the start of content becomes reasoning;
* tool-call fragments are merged by :class:`~smith_tui.llm.tool.ToolCallState`;
* a chunk with a top-level ``error`` (or ``object: "error"``) and an SSE
  ``event: error`` raise ``LLMError(code="stream_error")``;
* ``[DONE]`` marks the end; without it, a ``finish_reason`` on any choice does.
  A body that ends with neither is incomplete (:attr:`StreamAssembler.complete`
  is false) and the client raises ``stream_truncated``.

After each :meth:`StreamAssembler.feed` the new pieces wait in ``out`` as
``(kind, value)`` pairs with kind ``text``, ``reasoning``, ``tool`` or
``usage``; the caller dispatches and clears them.

Memory stays bounded however long the reply (:data:`MAX_MESSAGE_CHARS`): the text,
the reasoning (plain and in ``reasoning_details``) and the tool-call arguments of
one reply keep at most that many characters each. What comes after is neither
kept nor passed on; the text and the reasoning end with a marker saying how much
was dropped (:meth:`StreamAssembler.flush`), and cut arguments stay cut (invalid
JSON the tool executor refuses). The raw wire text is kept up to the same size.
A chunk nested too deeply to decode is a protocol error like any invalid JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from smith_tui.llm.errors import PROTOCOL, LLMError, error_from_payload
from smith_tui.llm.think import ThinkSplitter
from smith_tui.llm.tool import ToolCallState
from smith_tui.llm.types import ChatMessage, ChatResponse, Usage
from smith_tui.llm.usage import normalize_usage

MAX_MESSAGE_CHARS = 2_000_000
"""Characters one reply keeps of its text, of its reasoning and of its tool-call
arguments (each). About half a million tokens: far beyond any real answer, small
enough that a server streaming hundreds of megabytes costs a few megabytes here."""

_raw_decode = json.JSONDecoder().raw_decode
_DECODE_ERRORS = (ValueError, TypeError, RecursionError)
"""What decoding a hostile chunk may raise (RecursionError: nesting too deep)."""


def dropped_marker(what: str, dropped: int, limit: int) -> str:
    """The line that ends a text or reasoning cut at ``limit`` characters."""
    return (
        f"\n\n[smith: the {what} of this reply went on for {dropped:,} more characters; "
        f"they were dropped, one message keeps at most {limit:,}]"
    )


_TEXT_KEYS = {"reasoning.text": "text", "reasoning.summary": "summary"}
_CONCAT_KEYS = ("text", "summary", "data")


def _invalid_json(data: bytes | str, exc: Exception) -> LLMError:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return LLMError(
        PROTOCOL,
        "invalid_json",
        f"stream event is not valid JSON ({exc}): {text[:200]!r}",
        origin="stream",
        data={"data": text[:1000]},
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


class StreamAssembler:
    """Accumulates one streamed (or whole) completion."""

    def __init__(self, *, keep_raw: bool = True, max_chars: int = MAX_MESSAGE_CHARS) -> None:
        self.max_chars = max_chars
        """Characters kept of the text, of the reasoning and of the arguments (each)."""
        self.out: list[tuple[str, Any]] = []
        self.done = False
        self.finished = False
        """Some choice (not only choice 0) carried a ``finish_reason``."""
        self.finish_reason: str | None = None
        self.model: str | None = None
        self.usage: Usage | None = None
        self.raw: Any = [] if keep_raw else None
        self.chunks = 0
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._details: list[dict[str, Any]] = []
        self._detail_pos: dict[tuple[Any, Any], int] = {}
        self._tools = ToolCallState()
        self._think = ThinkSplitter()
        self._text_left = max_chars
        self._reasoning_left = max_chars
        self._args_left = max_chars
        self._raw_left = max_chars
        self._details_left = max_chars
        self._detail_parts: dict[tuple[int, str], list[str]] = {}
        self.dropped = {"text": 0, "reasoning": 0, "arguments": 0}
        """Characters not kept because the reply passed :attr:`max_chars`."""
        self._marked = False

    # ------------------------------------------------------------------ input

    def feed_event(self, event: str | None, data: bytes | str) -> None:
        """One SSE event: ``[DONE]``, an ``error`` event, or a JSON chunk."""
        if event == "error":
            try:
                payload: Any = json.loads(data)
            except _DECODE_ERRORS:
                payload = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
            raise error_from_payload(payload, event="error")
        if isinstance(data, bytes):
            # Only tools and tests feed bytes (the SSE parser decodes its lines).
            self._not_json(data, TypeError("bytes, not str"))
            return
        try:
            chunk, end = _raw_decode(data)
            if end != len(data) and data[end:].strip():
                raise ValueError("extra data after the JSON object")
        except _DECODE_ERRORS as exc:
            self._not_json(data, exc)
            return
        self._keep_raw(data)
        self._process(chunk)

    def _keep_raw(self, data: str) -> None:
        """Keep ``data`` (one event's wire text) while the raw budget lasts."""
        if self.raw is not None and self._raw_left > 0:
            # keep the wire text, not the dict: 10^5 live dicts make the cyclic GC crawl
            self._raw_left -= len(data)
            self.raw.append(data)

    def _decoded(self, text: str) -> bool:
        """Process ``text`` if it is JSON (its wire text kept like any event's)."""
        try:
            chunk = json.loads(text)
        except _DECODE_ERRORS:
            return False
        if isinstance(chunk, str):
            self.feed_event(None, chunk)  # as feed() did with a JSON string
            return True
        self._keep_raw(text)
        self._process(chunk)
        return True

    def _not_json(self, data: bytes | str, exc: Exception) -> None:
        if isinstance(data, bytes):
            text = data.decode("utf-8", "replace")
            if self._decoded(text):
                return
        else:
            text = data
        stripped = text.strip()
        if stripped == "[DONE]":
            self.done = True
            return
        if not stripped:
            return
        if stripped != text and self._decoded(stripped):
            return
        raise _invalid_json(text, exc) from None

    def feed_events(self, events: Any) -> LLMError | None:
        """Feed a batch of ``(event, data)`` pairs; stop at ``[DONE]`` or at an error.

        Returns the error instead of raising it, so the pieces assembled before
        it (already in ``out``) can still be delivered to the handlers first.
        """
        feed_event = self.feed_event
        try:
            for event, data in events:
                feed_event(event, data)
                if self.done:
                    break
        except LLMError as err:
            return err
        return None

    def feed(self, chunk: Any) -> None:
        """One decoded chunk (a dict; a JSON string is decoded first)."""
        if isinstance(chunk, str | bytes):
            self.feed_event(None, chunk)
            return
        if self.raw is not None:
            self.raw.append(chunk)
        self._process(chunk)

    def _process(self, chunk: Any) -> None:
        if type(chunk) is not dict and not isinstance(chunk, dict):
            raise LLMError(
                PROTOCOL,
                "invalid_json",
                f"stream chunk must be a JSON object, got {type(chunk).__name__}",
                origin="stream",
                data={"chunk": repr(chunk)[:500]},
            )
        self.chunks += 1
        try:
            if chunk.get("error") or chunk.get("object") == "error":
                raise error_from_payload(chunk)
            model = chunk.get("model")
            if model:
                self.model = model
            usage = chunk.get("usage")
            if usage is None:
                extra = chunk.get("x_groq")
                if extra:
                    usage = extra.get("usage")
            if usage:
                normalized = normalize_usage(usage)
                if normalized is not None:
                    self.usage = normalized
                    self.out.append(("usage", normalized))
            choices = chunk.get("choices")
            if choices:
                for choice in choices:
                    reason = choice.get("finish_reason")
                    if reason:
                        self.finished = True
                    if choice.get("index") or 0:
                        continue  # n > 1: only choice 0 is assembled
                    if reason:
                        self.finish_reason = reason
                    delta = choice.get("delta")
                    if not delta:
                        continue
                    if len(delta) == 1 and self._think.passthrough:
                        content = delta.get("content")
                        if content and type(content) is str:  # the common token delta
                            if len(content) <= self._text_left:
                                self._text_left -= len(content)
                                self._text.append(content)
                                self.out.append(("text", content))
                            else:
                                self._add_text(content)
                            continue
                    self._delta(delta)
        except (AttributeError, TypeError) as exc:
            raise LLMError(
                PROTOCOL,
                "invalid_chunk",
                f"stream chunk has an unexpected shape ({exc})",
                origin="stream",
                data={"chunk": chunk},
            ) from None

    def feed_completion(self, body: Mapping[str, Any]) -> None:
        """A whole non-streaming ``chat.completion`` body."""
        if body.get("error") or body.get("object") == "error":
            raise error_from_payload(body, code="provider_error", origin="response")
        choices = body.get("choices")
        if not isinstance(choices, list):
            raise LLMError(
                PROTOCOL,
                "invalid_response",
                "response has no choices list",
                origin="response",
                data={"body": dict(body)},
            )
        converted = []
        for choice in choices:
            if not isinstance(choice, Mapping):
                continue
            message = dict(choice.get("message") or choice.get("delta") or {})
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message["tool_calls"] = [
                    {**c, "index": i} for i, c in enumerate(calls) if isinstance(c, Mapping)
                ]
            converted.append({**choice, "delta": message})
        self.feed({**body, "choices": converted})
        if self.raw is not None:
            self.raw = dict(body)  # non-streaming: raw is the body itself

    # --------------------------------------------------------------- internals

    def _delta(self, delta: Mapping[str, Any]) -> None:
        out = self.out
        content = delta.get("content")
        if content:
            if not isinstance(content, str):
                content = _content_text(content)
            think = self._think
            if think.passthrough:
                self._add_text(content)
            else:
                reasoning, text = think.feed(content)
                if reasoning:
                    self._add_reasoning(reasoning)
                if text:
                    self._add_text(text)
        field = delta.get("reasoning_content") or delta.get("reasoning")
        plain = False
        if isinstance(field, str) and field:
            plain = True
            self._add_reasoning(field)
        details = delta.get("reasoning_details")
        if details:
            self._merge_details(details, collect_text=not plain)
        calls = delta.get("tool_calls")
        if calls:
            if isinstance(calls, list):
                calls = self._bounded_calls(calls)
            for piece in self._tools.merge(calls):
                out.append(("tool", piece))
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            self._add_text(refusal)

    def _add_text(self, piece: str) -> None:
        """Keep and pass on ``piece``, or the part of it within :attr:`max_chars`."""
        left = self._text_left
        if len(piece) > left:
            self.dropped["text"] += len(piece) - left
            piece = piece[:left]
        if piece:
            self._text_left = left - len(piece)
            self._text.append(piece)
            self.out.append(("text", piece))

    def _add_reasoning(self, piece: str) -> None:
        """Like :meth:`_add_text`, for reasoning."""
        left = self._reasoning_left
        if len(piece) > left:
            self.dropped["reasoning"] += len(piece) - left
            piece = piece[:left]
        if piece:
            self._reasoning_left = left - len(piece)
            self._reasoning.append(piece)
            self.out.append(("reasoning", piece))

    def _bounded_calls(self, calls: list[Any]) -> list[Any]:
        """``calls`` with argument fragments past the reply's budget cut away."""
        kept = []
        for call in calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                kept.append(call)
                continue
            fragment = function.get("arguments")
            if isinstance(fragment, str) and fragment:
                left = self._args_left
                if len(fragment) > left:
                    self.dropped["arguments"] += len(fragment) - left
                    call = {**call, "function": {**function, "arguments": fragment[:left]}}
                    fragment = fragment[:left]
                self._args_left = left - len(fragment)
            kept.append(call)
        return kept

    def _merge_details(self, details: Any, *, collect_text: bool) -> None:
        if not isinstance(details, list):
            return
        for detail in details:
            if not isinstance(detail, Mapping):
                continue
            kind = detail.get("type")
            if collect_text:
                text_key = _TEXT_KEYS.get(kind) if isinstance(kind, str) else None
                text = detail.get(text_key) if text_key else None
                if isinstance(text, str) and text:
                    self._add_reasoning(text)
            key = (kind, detail.get("index"))
            pos = self._detail_pos.get(key)
            if pos is None:
                pos = self._detail_pos[key] = len(self._details)
                self._details.append({})
            merged = self._details[pos]
            for name, value in detail.items():
                if name in _CONCAT_KEYS and isinstance(value, str):
                    # pieces joined in finish(): adding each to the string so far is quadratic
                    parts = self._detail_parts.setdefault((pos, name), [])
                    merged[name] = ""
                    value = value[: self._details_left]
                    self._details_left -= len(value)
                    parts.append(value)
                elif value not in (None, "") or name not in merged:
                    merged[name] = value

    @property
    def complete(self) -> bool:
        """Whether the stream said it was over: ``[DONE]`` or a ``finish_reason``.

        Two real providers never send a finish reason but do send ``[DONE]``;
        JSON-lines bodies carry a finish reason but no ``[DONE]``. Either one is
        enough; a stream with neither was cut short.
        """
        return self.done or self.finished

    # ------------------------------------------------------------------ output

    def flush(self) -> None:
        """Release text held back by the ``<think>`` splitter into ``out``; then, once,
        end a text or reasoning cut at :attr:`max_chars` with its dropped-marker."""
        reasoning, text = self._think.flush()
        if reasoning:
            self._add_reasoning(reasoning)
        if text:
            self._add_text(text)
        if self._marked:
            return
        self._marked = True
        for kind, parts in (("text", self._text), ("reasoning", self._reasoning)):
            if self.dropped[kind]:
                marker = dropped_marker(kind, self.dropped[kind], self.max_chars)
                parts.append(marker)
                self.out.append((kind, marker))

    @property
    def text(self) -> str:
        """Text assembled so far."""
        return "".join(self._text)

    def finish(self) -> ChatResponse:
        """Build the final response (call :meth:`flush` first when streaming)."""
        self.flush()
        self.out.clear()
        for (pos, name), parts in self._detail_parts.items():
            self._details[pos][name] = "".join(parts)
        self._detail_parts.clear()
        message = ChatMessage(
            role="assistant", content="".join(self._text), tool_calls=self._tools.finish()
        )
        return ChatResponse(
            message=message,
            reasoning="".join(self._reasoning),
            reasoning_details=self._details,
            finish_reason=self.finish_reason,
            usage=self.usage,
            raw=self.raw,
            model=self.model,
        )


def assemble_events(events: Any) -> ChatResponse:
    """Assemble an iterable of ``(event, data)`` pairs or decoded chunks (for tests/tools)."""
    asm = StreamAssembler()
    for item in events:
        if isinstance(item, tuple):
            asm.feed_event(*item)
        else:
            asm.feed(item)
        asm.out.clear()
        if asm.done:
            break
    return asm.finish()
