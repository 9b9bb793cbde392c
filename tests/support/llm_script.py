"""Scripted replies for the test Chat-Completions server: exactly which bytes to send, and how.

A :class:`Reply` is plain data. The server (``tests.support.llm_server``) consumes one per chat
request and turns it into HTTP: a status line, headers, then either a fixed body or a list of
SSE frames written one after another (optionally re-cut into random-size writes), ending with a
clean close, an abrupt disconnect or a stall.

The builders (:func:`text_reply`, :func:`replay_file`, :func:`http_error`, ...) cover the cases
the client has to survive; :func:`raw_sse` covers anything else.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

STREAMS_DIR: Path = Path(
    os.environ.get("SMITH_STREAMS_DIR")
    or Path(__file__).resolve().parents[1] / "fixtures" / "streams"
)
"""Folder of recorded provider responses: ``tests/fixtures/streams`` in this repository
(env ``SMITH_STREAMS_DIR`` points the tests at another folder)."""

DONE = "data: [DONE]\n\n"
"""The OpenAI end-of-stream sentinel frame."""

KEEP_ALIVE = ": keep-alive\n\n"
"""An SSE comment frame, as providers send while the model is thinking."""

DEFAULT_MODEL = "scripted-model"

Ending = Literal["close", "abort", "reset", "stall"]
"""How a response ends: clean close, FIN mid-body, RST mid-body, or silence until stop."""

_FINISHED = re.compile(rb'"finish_reason"\s*:\s*"')

_call_ids = itertools.count(1)
_completion_ids = itertools.count(1)


def _json(value: Any) -> str:
    # Compact and UTF-8 on the wire, like real providers (so re-chunking can split characters).
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _data_frame(payload: Any) -> bytes:
    text = payload if isinstance(payload, str) else _json(payload)
    return f"data: {text}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    if not text:
        return []
    if size <= 0:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True)
class Usage:
    """Token counts for a scripted reply; serialized OpenAI-style by :meth:`to_dict`."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The wire form: ``prompt_tokens``, ``completion_tokens``, ``total_tokens`` (+ details)."""
        total = self.total_tokens
        if total is None:
            total = self.prompt_tokens + self.completion_tokens
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": total,
        }
        if self.cached_tokens is not None:
            out["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        if self.reasoning_tokens is not None:
            out["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        return out


def _usage_dict(usage: Usage | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    if isinstance(usage, Usage):
        return usage.to_dict()
    if isinstance(usage, Mapping):
        return dict(usage)
    raise TypeError(f"usage must be a Usage or a dict, not {type(usage).__name__}")


@dataclass(frozen=True)
class ToolCall:
    """One scripted tool call; ``arguments`` is the JSON text the model "writes"."""

    name: str
    arguments: str
    id: str

    def to_message_dict(self) -> dict[str, Any]:
        """The non-streaming ``message.tool_calls[]`` entry."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


def tool_call(
    name: str, arguments: Mapping[str, Any] | str = "{}", id: str | None = None
) -> ToolCall:
    """A tool call; dict arguments are JSON-encoded, ``id`` defaults to a fresh ``call_<n>``."""
    if not isinstance(arguments, str):
        arguments = _json(dict(arguments))
    return ToolCall(
        name=name, arguments=arguments, id=id if id is not None else f"call_{next(_call_ids)}"
    )


@dataclass
class Reply:
    """Everything the server needs to answer one request.

    Streaming requests get ``status`` + headers, then ``events`` (each a complete SSE frame, in
    bytes) and finally the ``ending``. Requests with ``"stream": false`` get ``completion`` as a
    JSON body when it is set; otherwise the same SSE bytes. ``body``, when set, is served to
    every request instead (error replies).
    """

    events: list[bytes] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    body: bytes | None = None
    completion: dict[str, Any] | None = None
    delay_s: float = 0.0
    """Pause before the first byte (the status line)."""
    event_delay_s: float = 0.0
    """Pause between two consecutive events (not used when re-chunking)."""
    pauses: dict[int, float] = field(default_factory=dict)
    """Extra pause before event number ``i`` (not used when re-chunking)."""
    ending: Ending = "close"
    hold_s: float = 60.0
    """How long a ``stall`` ending keeps the connection silent (server stop ends it sooner)."""
    send_headers: bool = True
    """With a ``stall`` ending: False holds back even the status line."""
    rechunk_seed: int | None = None
    min_write: int = 1
    max_write: int = 4096
    write_pause_s: float = 0.0
    """Yield after each re-chunked write (0 = just let the loop turn)."""
    transfer: Literal["chunked", "close"] = "chunked"
    """Body framing of streams: HTTP chunked encoding, or raw bytes ended by closing."""
    label: str = "reply"

    def copy(self, **changes: Any) -> Reply:
        """A deep copy with some fields changed."""
        return replace(copy.deepcopy(self), **changes)

    def rechunked(self, seed: int, min_write: int = 1, max_write: int = 4096) -> Reply:
        """A copy whose stream bytes go out in random-size writes (``random.Random(seed)``)."""
        _check_write_sizes(min_write, max_write)
        return self.copy(rechunk_seed=seed, min_write=min_write, max_write=max_write)

    def stream_bytes(self) -> bytes:
        """All the stream bytes, as the client should receive them once de-chunked."""
        return b"".join(self.events)

    def writes(self) -> list[bytes]:
        """The pieces the server writes, in order: events, or random cuts of their bytes."""
        if self.rechunk_seed is None:
            return list(self.events)
        data = self.stream_bytes()
        rng = random.Random(self.rechunk_seed)
        out: list[bytes] = []
        pos = 0
        while pos < len(data):
            size = rng.randint(self.min_write, self.max_write)
            out.append(data[pos : pos + size])
            pos += size
        return out

    def payloads(self) -> list[str]:
        """The ``data:`` payloads of the events (joined per event), for inspection in tests."""
        out: list[str] = []
        for frame in self.events:
            lines = frame.decode("utf-8", "replace").splitlines()
            data = [ln[5:].removeprefix(" ") for ln in lines if ln.startswith("data:")]
            if data:
                out.append("\n".join(data))
        return out


def _check_write_sizes(min_write: int, max_write: int) -> None:
    if min_write < 1 or max_write < min_write:
        raise ValueError(
            f"write sizes must satisfy 1 <= min_write <= max_write, got {min_write}..{max_write}"
        )


def _chunk_maker(model: str) -> tuple[str, int, Any]:
    cid = f"chatcmpl-scripted-{next(_completion_ids)}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    return cid, created, chunk


def _with_heartbeats(frames: list[bytes], every: int, leading: int) -> list[bytes]:
    beat = KEEP_ALIVE.encode()
    out = [beat] * leading
    for i, frame in enumerate(frames, start=1):
        out.append(frame)
        if every > 0 and i % every == 0 and i < len(frames):
            out.append(beat)
    return out


def text_reply(
    text: str = "",
    *,
    reasoning: str | None = None,
    tool_calls: Sequence[ToolCall] | None = None,
    usage: Usage | Mapping[str, Any] | None = None,
    finish_reason: str | None = None,
    chunk_chars: int = 8,
    heartbeat_every: int = 0,
    leading_heartbeats: int = 0,
    event_delay_s: float = 0.0,
    model: str = DEFAULT_MODEL,
    include_done: bool = True,
    delay_s: float = 0.0,
) -> Reply:
    """An OpenAI-style streamed answer (and its non-streaming twin in ``completion``).

    Frames: role delta; ``reasoning_content`` deltas; ``content`` deltas of ``chunk_chars``
    characters (<= 0: one delta); per tool call a header delta (index, id, type, name,
    ``arguments: ""``) then argument pieces; the finish chunk (default ``tool_calls`` when
    there are tool calls, else ``stop``); a ``choices: []`` usage chunk when ``usage`` is
    given; ``data: [DONE]``. ``heartbeat_every=N`` puts ``: keep-alive`` after every N frames.
    """
    calls = list(tool_calls or [])
    for call in calls:
        if not isinstance(call, ToolCall):
            raise TypeError(f"tool_calls takes ToolCall objects (see tool_call()), got {call!r}")
    finish = finish_reason or ("tool_calls" if calls else "stop")
    usage_dict = _usage_dict(usage)
    cid, created, chunk = _chunk_maker(model)

    frames = [_data_frame(chunk({"role": "assistant", "content": ""}))]
    for piece in _pieces(reasoning or "", chunk_chars):
        frames.append(_data_frame(chunk({"reasoning_content": piece})))
    for piece in _pieces(text, chunk_chars):
        frames.append(_data_frame(chunk({"content": piece})))
    for index, call in enumerate(calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        frames.append(_data_frame(chunk({"tool_calls": [head]})))
        for piece in _pieces(call.arguments, chunk_chars):
            part = {"index": index, "function": {"arguments": piece}}
            frames.append(_data_frame(chunk({"tool_calls": [part]})))
    frames.append(_data_frame(chunk({}, finish)))
    if usage_dict is not None:
        frames.append(
            _data_frame(
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": usage_dict,
                }
            )
        )
    if include_done:
        frames.append(DONE.encode())

    message: dict[str, Any] = {
        "role": "assistant",
        "content": text if (text or not calls) else None,
    }
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [call.to_message_dict() for call in calls]
    completion = {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage_dict or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
    return Reply(
        events=_with_heartbeats(frames, heartbeat_every, leading_heartbeats),
        completion=completion,
        delay_s=delay_s,
        event_delay_s=event_delay_s,
        label=f"text_reply({text[:20]!r}{', tools' if calls else ''})",
    )


def stream_file(name: str | os.PathLike[str]) -> Path:
    """Resolve a recording: a path, a file name in :data:`STREAMS_DIR`, or a unique prefix ("01")."""
    path = Path(name)
    if path.is_file():
        return path
    candidate = STREAMS_DIR / path
    if candidate.is_file():
        return candidate
    matches = sorted(STREAMS_DIR.glob(f"{path.name}*")) if STREAMS_DIR.is_dir() else []
    if len(matches) == 1:
        return matches[0]
    if not STREAMS_DIR.is_dir():
        raise FileNotFoundError(
            f"recording {str(name)!r} not found and {STREAMS_DIR} does not exist; "
            "set SMITH_STREAMS_DIR to the folder of recorded streams"
        )
    names = ", ".join(p.name for p in (matches or sorted(STREAMS_DIR.iterdir())))
    what = "is ambiguous" if matches else "not found"
    raise FileNotFoundError(f"recording {str(name)!r} {what} in {STREAMS_DIR}; candidates: {names}")


def split_sse_frames(data: bytes) -> list[bytes]:
    """Cut SSE bytes after each blank line; joining the result gives ``data`` back exactly."""
    frames: list[bytes] = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\n\n", pos)
        if end < 0:
            frames.append(data[pos:])
            break
        frames.append(data[pos : end + 2])
        pos = end + 2
    return frames


def jsonl_frames(data: bytes) -> list[bytes]:
    """One ``data: <line>\\n\\n`` frame per non-empty line of a ``.chunks.jsonl`` recording."""
    return [b"data: " + line + b"\n\n" for line in data.split(b"\n") if line.strip()]


def replay_file(
    path: str | os.PathLike[str],
    *,
    rechunk_seed: int | None = None,
    min_write: int = 1,
    max_write: int = 4096,
    event_delay_s: float = 0.0,
    delay_s: float = 0.0,
) -> Reply:
    """Serve a recorded stream byte-exact: ``.sse`` as-is, ``.chunks.jsonl`` re-framed as
    ``data: <line>`` events (no ``[DONE]`` added). With ``rechunk_seed`` the bytes go out in
    random writes of ``min_write..max_write`` bytes, each drained separately."""
    file = stream_file(path)
    data = file.read_bytes()
    if file.name.endswith(".sse"):
        frames = split_sse_frames(data)
    elif file.name.endswith(".jsonl"):
        frames = jsonl_frames(data)
    else:
        raise ValueError(
            f"replay_file serves .sse or .chunks.jsonl recordings; {file.name} is neither "
            "(a /models catalog goes into ScriptedLLMServer.catalog)"
        )
    reply = Reply(
        events=frames, delay_s=delay_s, event_delay_s=event_delay_s, label=f"replay({file.name})"
    )
    if rechunk_seed is not None:
        reply = reply.rechunked(rechunk_seed, min_write, max_write)
    return reply


def sse_event(
    data: str | Mapping[str, Any], *, event: str | None = None, id: str | None = None
) -> str:
    """Format one SSE event (dict data is JSON-encoded; multi-line text gets one ``data:`` per line)."""
    text = data if isinstance(data, str) else _json(dict(data))
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    lines.extend(f"data: {line}" for line in text.split("\n"))
    return "\n".join(lines) + "\n\n"


def raw_sse(
    events: Sequence[str | bytes | Mapping[str, Any]],
    *,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    content_type: str = "text/event-stream",
    include_done: bool = False,
    event_delay_s: float = 0.0,
    delay_s: float = 0.0,
) -> Reply:
    """Arbitrary frames: a dict becomes ``data: <json>\\n\\n``; str/bytes are sent verbatim
    (include the blank line yourself, or use :func:`sse_event`)."""
    frames: list[bytes] = []
    for item in events:
        if isinstance(item, bytes):
            frames.append(item)
        elif isinstance(item, str):
            frames.append(item.encode())
        elif isinstance(item, Mapping):
            frames.append(_data_frame(dict(item)))
        else:
            raise TypeError(f"raw_sse events are str, bytes or dict, not {type(item).__name__}")
    if include_done:
        frames.append(DONE.encode())
    return Reply(
        events=frames,
        status=status,
        headers=dict(headers or {}),
        content_type=content_type,
        delay_s=delay_s,
        event_delay_s=event_delay_s,
        label="raw_sse",
    )


_ERROR_KINDS = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", "forbidden"),
    404: ("not_found_error", "model_not_found"),
    408: ("timeout_error", "timeout"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """An OpenAI-shaped ``{"error": {"message", "type", "code"}}`` for an HTTP status."""
    kind, code = _ERROR_KINDS.get(
        status, ("server_error", "server_error") if status >= 500 else ("api_error", None)
    )
    return {"error": {"message": message or f"scripted error {status}", "type": kind, "code": code}}


def http_error(
    status: int,
    body: Mapping[str, Any] | str | bytes | None = None,
    *,
    retry_after: float | str | None = None,
    headers: Mapping[str, str] | None = None,
    content_type: str | None = None,
    delay_s: float = 0.0,
) -> Reply:
    """An HTTP error response served to any request; dict bodies are JSON, text is text/plain."""
    if not 100 <= status <= 999:
        raise ValueError(f"HTTP status must be a 3-digit number, got {status}")
    if body is None:
        body = error_body(status)
    if isinstance(body, Mapping):
        raw, ctype = _json(dict(body)).encode(), "application/json"
    elif isinstance(body, str):
        raw, ctype = body.encode(), "text/plain; charset=utf-8"
    else:
        raw, ctype = bytes(body), "application/octet-stream"
    extra = dict(headers or {})
    if retry_after is not None:
        value = retry_after
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        extra["Retry-After"] = str(value)
    return Reply(
        status=status,
        headers=extra,
        content_type=content_type or ctype,
        body=raw,
        delay_s=delay_s,
        label=f"http_error({status})",
    )


def _long_text_reply() -> Reply:
    words = "Mr. Anderson, the stream goes on and on while the client keeps reading. "
    return text_reply(words * 8, chunk_chars=16)


def disconnect_after(n_events: int, base: Reply | None = None, *, reset: bool = False) -> Reply:
    """The first ``n_events`` frames of ``base`` (default: a long text reply), then the socket
    closes mid-body with no ``[DONE]``: FIN, or RST with ``reset=True``. A non-streaming
    request gets half of the JSON body, then the same cut."""
    if n_events < 0:
        raise ValueError(f"n_events must be >= 0, got {n_events}")
    base = base if base is not None else _long_text_reply()
    return base.copy(
        events=base.events[:n_events],
        ending="reset" if reset else "abort",
        label=f"disconnect_after({n_events}, {base.label})",
    )


def first_end_frame(reply: Reply) -> int | None:
    """Index of the first frame of ``reply`` that ends the answer (a non-null
    ``finish_reason`` or ``[DONE]``), or ``None`` if no frame does."""
    for index, frame in enumerate(reply.events):
        if _FINISHED.search(frame) or b"[DONE]" in frame:
            return index
    return None


def truncate_after(
    n_events: int, base: Reply | None = None, *, transfer: Literal["chunked", "close"] = "chunked"
) -> Reply:
    """The first ``n_events`` frames of ``base`` (default: a long text reply), then a *clean*
    end of the body: the HTTP response is complete, but no chunk carried a ``finish_reason``
    and no ``[DONE]`` came (a proxy or provider that gave up quietly). ``transfer="close"``
    sends raw bytes ended by closing the connection instead of chunked framing.
    Non-streaming requests get the same truncated stream."""
    if n_events < 0:
        raise ValueError(f"n_events must be >= 0, got {n_events}")
    base = base if base is not None else _long_text_reply()
    end = first_end_frame(base)
    if end is not None and end < n_events:
        raise ValueError(
            f"truncate_after({n_events}) keeps a finish or [DONE] frame of {base.label}; "
            "cut earlier so the stream is really truncated"
        )
    return base.copy(
        events=base.events[:n_events],
        ending="close",
        transfer=transfer,
        completion=None,
        label=f"truncate_after({n_events}, {base.label})",
    )


def stall(
    after_events: int = 0,
    base: Reply | None = None,
    hold_s: float = 60.0,
    *,
    send_headers: bool = True,
) -> Reply:
    """The first ``after_events`` frames of ``base``, then silence for ``hold_s`` (or until the
    server stops), then an abrupt close. ``send_headers=False`` withholds even the status line."""
    if after_events < 0:
        raise ValueError(f"after_events must be >= 0, got {after_events}")
    base = base if base is not None else _long_text_reply()
    return base.copy(
        events=base.events[:after_events],
        ending="stall",
        hold_s=hold_s,
        send_headers=send_headers,
        label=f"stall({after_events}, {base.label})",
    )


def malformed_json_event(
    base: Reply | None = None, at: int = 1, *, payload: str = "{not json"
) -> Reply:
    """``base`` (default: a short text reply) with a ``data: {not json`` frame inserted at ``at``."""
    base = base if base is not None else text_reply("Hello from the scripted server.")
    if not 0 <= at <= len(base.events):
        raise ValueError(f"at must be within 0..{len(base.events)}, got {at}")
    events = list(base.events)
    events.insert(at, f"data: {payload}\n\n".encode())
    return base.copy(events=events, completion=None, label=f"malformed_json_event({at})")


def in_stream_error(
    message: str = "Token limit reached",
    code: int | str = 400,
    *,
    text: str = "",
    finish_reason: str | None = "error",
    model: str = DEFAULT_MODEL,
    delay_s: float = 0.0,
) -> Reply:
    """HTTP 200 stream whose chunk carries a top-level ``"error": {code, message}`` (the
    OpenRouter form), after an optional bit of ``text``, then ``[DONE]``."""
    _cid, _created, chunk = _chunk_maker(model)
    frames = [_data_frame(chunk({"role": "assistant", "content": ""}))]
    frames += [_data_frame(chunk({"content": piece})) for piece in _pieces(text, 8)]
    err = chunk({"content": ""}, finish_reason)
    err["error"] = {"code": code, "message": message}
    frames += [_data_frame(err), DONE.encode()]
    return Reply(events=frames, delay_s=delay_s, label=f"in_stream_error({message!r})")


def event_error(
    message: str = "Tool call validation failed",
    code: str | int = "tool_use_failed",
    *,
    error_type: str = "invalid_request_error",
    status_code: int = 400,
    text: str = "",
    model: str = DEFAULT_MODEL,
    delay_s: float = 0.0,
) -> Reply:
    """HTTP 200 stream ending in an ``event: error`` frame with ``{"error": {...}}`` and no
    ``[DONE]`` (the Groq form)."""
    _cid, _created, chunk = _chunk_maker(model)
    frames = [_data_frame(chunk({"role": "assistant", "content": ""}))]
    frames += [_data_frame(chunk({"content": piece})) for piece in _pieces(text, 8)]
    error = {"message": message, "type": error_type, "code": code, "status_code": status_code}
    frames.append(sse_event({"error": error}, event="error").encode())
    return Reply(events=frames, delay_s=delay_s, label=f"event_error({code!r})")


_SPEC_KEYS = {
    "text": {"text", "reasoning", "tool_calls", "usage", "finish_reason", "chunk_chars",
             "heartbeat_every", "leading_heartbeats", "event_delay_s", "model", "include_done",
             "delay_s"},
    "replay": {"replay", "rechunk_seed", "min_write", "max_write", "event_delay_s", "delay_s"},
    "error": {"error", "body", "retry_after", "headers", "delay_s"},
    "raw": {"raw", "status", "headers", "include_done", "event_delay_s", "delay_s"},
}  # fmt: skip


def reply_from_spec(spec: str | Mapping[str, Any]) -> Reply:
    """Build a reply from JSON-able data (for script files): a string is a text reply; a dict
    has one of the keys ``text``, ``replay``, ``error`` (status) or ``raw`` (event list) plus
    the matching builder's keyword arguments; ``tool_calls`` entries are
    ``{"name", "arguments", "id"?}``."""
    if isinstance(spec, str):
        return text_reply(spec)
    if not isinstance(spec, Mapping):
        raise ValueError(f"a reply spec is a string or an object, got {spec!r}")
    kinds = [k for k in _SPEC_KEYS if k in spec]
    if len(kinds) != 1:
        raise ValueError(
            f"a reply spec needs exactly one of {sorted(_SPEC_KEYS)}, got {sorted(spec)}"
        )
    kind = kinds[0]
    unknown = set(spec) - _SPEC_KEYS[kind]
    if unknown:
        raise ValueError(
            f"unknown keys {sorted(unknown)} in {kind!r} reply spec; allowed: {sorted(_SPEC_KEYS[kind])}"
        )
    args = {k: v for k, v in spec.items() if k != kind}
    if kind == "text":
        calls = []
        for item in args.pop("tool_calls", None) or []:
            if not isinstance(item, Mapping) or "name" not in item:
                raise ValueError(f"a tool call spec is an object with a 'name', got {item!r}")
            calls.append(tool_call(item["name"], item.get("arguments", "{}"), item.get("id")))
        return text_reply(spec["text"], tool_calls=calls, **args)
    if kind == "replay":
        return replay_file(spec["replay"], **args)
    if kind == "error":
        return http_error(int(spec["error"]), **args)
    return raw_sse(list(spec["raw"]), **args)


def heartbeats_only(count: int = 100_000, every_s: float = 0.05) -> Reply:
    """A 200 stream that sends nothing but ``: keep-alive`` comments, one every ``every_s``
    seconds, ``count`` times (a server whose model never starts answering)."""
    if count < 1 or every_s <= 0:
        raise ValueError(
            f"heartbeats_only needs count >= 1 and every_s > 0, got {count}, {every_s}"
        )
    return Reply(
        events=[KEEP_ALIVE.encode()] * count,
        event_delay_s=every_s,
        ending="stall",
        label=f"heartbeats_only({count}, {every_s})",
    )


def huge_reply(size: int, *, chunk_chars: int = 64 * 1024) -> Reply:
    """A streamed text answer of ``size`` characters (ASCII, so also bytes of content) in
    deltas of ``chunk_chars``; ends normally with a finish chunk and ``[DONE]``."""
    line = "The quick brown fox jumps over the lazy dog, again and again. 0123456789\n"
    text = (line * (size // len(line) + 1))[:size]
    reply = text_reply(text, chunk_chars=chunk_chars)
    return reply.copy(completion=None, label=f"huge_reply({size})")
