"""Request shaping: URL, headers, endpoint and the JSON body."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from smith_tui.llm.config import LLMConfig
from smith_tui.llm.errors import schema_error
from smith_tui.llm.secret import Secret
from smith_tui.llm.transcript_checks import sanitize_messages
from smith_tui.llm.types import ChatRequest

_VERSION_SEGMENT = re.compile(r"^v\d+(?:[a-z]+\d*)?$")
_ENDPOINT_SUFFIXES = ("/chat/completions", "/completions", "/models")
_PROTECTED_EXTRA = frozenset({"model", "messages", "stream"})
_REQUEST_FIELDS = frozenset(f.name for f in fields(ChatRequest))
USER_AGENT = "smith-tui"


def normalize_api_url(api_url: str) -> str:
    """Return the API base ending in a version segment, without trailing slash.

    ``http://host:8080``, ``http://host:8080/`` and ``http://host:8080/v1/``
    all become ``http://host:8080/v1``. A path that already contains a
    version segment (``/v1``, ``/api/paas/v4``, ``/v1beta/openai``) is kept as
    is; a pasted ``/chat/completions`` endpoint is trimmed back to its base.
    """
    if not isinstance(api_url, str) or not api_url.strip():
        raise schema_error("api_url must be a non-empty URL", code="config_invalid")
    parts = urlsplit(api_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise schema_error(
            f"api_url {api_url!r} must start with http:// or https:// and name a host",
            code="config_invalid",
        )
    path = parts.path.rstrip("/")
    for suffix in _ENDPOINT_SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)].rstrip("/")
            break
    segments = [s for s in path.split("/") if s]
    if not any(_VERSION_SEGMENT.match(s) for s in segments):
        path = path + "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def build_endpoint(api_url: str, path: str = "chat/completions") -> str:
    """Join the normalised base and an endpoint path (``chat/completions``, ``models``)."""
    base = normalize_api_url(api_url)
    parts = urlsplit(base)
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


def build_headers(config: LLMConfig, *, stream: bool = False) -> dict[str, str]:
    """HTTP headers for a request; the only place the key is revealed."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream" if stream else "application/json",
        "User-Agent": USER_AGENT,
    }
    if stream:
        headers["Cache-Control"] = "no-store"
    if isinstance(config.api_key, Secret) and config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key.reveal()}"
    headers.update(config.extra_headers)
    return headers


def coerce_request(request: ChatRequest | Mapping[str, Any]) -> ChatRequest:
    """Accept a :class:`ChatRequest` or a plain dict with the same keys.

    In a dict, ``max_tokens`` is accepted as a spelling of ``max_new_tokens``
    and unknown keys are moved into ``extra``.
    """
    if isinstance(request, ChatRequest):
        return request
    if not isinstance(request, Mapping):
        raise schema_error(f"request must be a ChatRequest or a dict, got {type(request).__name__}")
    data = dict(request)
    if "max_tokens" in data and "max_new_tokens" not in data:
        data["max_new_tokens"] = data.pop("max_tokens")
    extra = dict(data.pop("extra", None) or {})
    for key in list(data):
        if key not in _REQUEST_FIELDS:
            extra[key] = data.pop(key)
    for key in ("model", "messages"):
        if key not in data:
            raise schema_error(f"request is missing {key!r}")
    return ChatRequest(**data, extra=extra)


def _check_number(name: str, value: Any, *, integer: bool = False) -> None:
    bad = isinstance(value, bool) or not isinstance(value, int | float)
    if not bad and integer:
        bad = not isinstance(value, int) or value <= 0
    if not bad and isinstance(value, float):
        bad = not math.isfinite(value)
    if bad:
        want = "a positive integer" if integer else "a number"
        raise schema_error(f"{name} must be {want}, got {value!r}")


def build_chat_request(
    request: ChatRequest | Mapping[str, Any], *, stream: bool | None = None
) -> dict[str, Any]:
    """Validate ``request`` and build the Chat-Completions body (not yet serialised)."""
    req = coerce_request(request)
    if not isinstance(req.model, str) or not req.model.strip():
        raise schema_error("model must be a non-empty string")
    streaming = req.stream if stream is None else stream
    body: dict[str, Any] = {"model": req.model, "messages": sanitize_messages(req.messages)}
    if req.tools:
        if not isinstance(req.tools, list) or not all(isinstance(t, Mapping) for t in req.tools):
            raise schema_error("tools must be a list of tool schema objects")
        body["tools"] = [dict(t) for t in req.tools]
    if req.tool_choice is not None:
        body["tool_choice"] = req.tool_choice
    if req.temperature is not None:
        _check_number("temperature", req.temperature)
        body["temperature"] = req.temperature
    if req.max_new_tokens is not None:
        _check_number("max_new_tokens", req.max_new_tokens, integer=True)
        body["max_tokens"] = req.max_new_tokens
    body["stream"] = bool(streaming)
    if streaming:
        body["stream_options"] = {"include_usage": True}
    if req.extra:
        if not isinstance(req.extra, Mapping):
            raise schema_error("extra must be a mapping of body fields")
        clash = _PROTECTED_EXTRA & set(req.extra)
        if clash:
            raise schema_error(f"extra may not set {sorted(clash)}; use the request fields")
        for key, value in req.extra.items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = value
    return body


def serialize_request_body(body: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON; a value JSON cannot hold is a schema error, not a crash."""
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
            "utf-8"
        )
    except (TypeError, ValueError) as exc:
        raise schema_error(f"request body is not JSON-serialisable: {exc}") from None
