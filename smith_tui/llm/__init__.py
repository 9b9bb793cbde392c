"""Chat-Completions protocol client (docs/LLM.md): request shaping, HTTP/SSE transport,
stream assembly, tool payload helpers, model catalog and discovery.

This package imports nothing else from ``smith_tui``. Typical use::

    from smith_tui.llm import LLMClient, LLMConfig, ChatRequest

    async with LLMClient(LLMConfig(api_url="http://127.0.0.1:8080")) as client:
        response = await client.chat_stream(
            ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}]),
            {"on_text": print},
        )

See docs/LLM.md for the full contract.
"""

from smith_tui.llm import discovery, tool
from smith_tui.llm.catalog import ModelDescriptor, parse_models
from smith_tui.llm.client import (
    LLMClient,
    chat,
    chat_stream,
    error_from_exception,
    new,
    normalize_error,
)
from smith_tui.llm.config import LLMConfig, coerce_config
from smith_tui.llm.discovery import (
    Discovery,
    fallback_chain,
    first_available,
    prefer_capability_tag,
    prefer_prefix,
)
from smith_tui.llm.errors import (
    CANCELLED,
    CONTEXT_OVERFLOW,
    HTTP,
    PROTOCOL,
    PROVIDER,
    SCHEMA,
    TRANSPORT,
    LLMError,
    error_from_http,
    error_from_payload,
    is_context_overflow,
    parse_retry_after,
    status_is_retryable,
)
from smith_tui.llm.request import (
    build_chat_request,
    build_endpoint,
    build_headers,
    coerce_request,
    normalize_api_url,
    serialize_request_body,
)
from smith_tui.llm.secret import Secret, redact
from smith_tui.llm.sse import SSEParser
from smith_tui.llm.stream import StreamAssembler, assemble_events
from smith_tui.llm.tool import (
    ToolCallState,
    build_tool_result_message,
    build_tool_schema,
    extract_stream_tool_calls,
    extract_tool_call,
    extract_tool_calls,
    merge_stream_delta,
)
from smith_tui.llm.transcript_checks import sanitize_messages, stringify_content
from smith_tui.llm.types import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    StreamHandlers,
    ToolCall,
    ToolCallDelta,
    Usage,
    WireFunction,
    WireMessage,
    WireToolCall,
)
from smith_tui.llm.usage import normalize_usage

__all__ = [
    "CANCELLED",
    "CONTEXT_OVERFLOW",
    "HTTP",
    "PROTOCOL",
    "PROVIDER",
    "SCHEMA",
    "TRANSPORT",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "Discovery",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "ModelDescriptor",
    "SSEParser",
    "Secret",
    "StreamAssembler",
    "StreamHandlers",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallState",
    "Usage",
    "WireFunction",
    "WireMessage",
    "WireToolCall",
    "assemble_events",
    "build_chat_request",
    "build_endpoint",
    "build_headers",
    "build_tool_result_message",
    "build_tool_schema",
    "chat",
    "chat_stream",
    "coerce_config",
    "coerce_request",
    "discovery",
    "error_from_exception",
    "error_from_http",
    "error_from_payload",
    "extract_stream_tool_calls",
    "extract_tool_call",
    "extract_tool_calls",
    "fallback_chain",
    "first_available",
    "is_context_overflow",
    "merge_stream_delta",
    "new",
    "normalize_api_url",
    "normalize_error",
    "normalize_usage",
    "parse_models",
    "parse_retry_after",
    "prefer_capability_tag",
    "prefer_prefix",
    "redact",
    "sanitize_messages",
    "serialize_request_body",
    "status_is_retryable",
    "stringify_content",
    "tool",
]
