"""MCP tools as our tools: names, schemas, and results as tool output.

An MCP server's tool becomes a :class:`ToolSpec` named ``mcp__<server>__<tool>`` that
carries the server's JSON schema as is (``raw_schema``), is offered to the roles of the
server's ``roles`` setting (its own allowlist; the engine's matrix lets every MCP tool
through) and calls the server through a :class:`ToolCaller`. A result's text is kept,
images and audio become a note, resources become links, and the whole is cut to the
usual tool-output budget.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from mcp import types

from smith_tui.mcp import TOOL_PREFIX
from smith_tui.tools.args import max_output_chars
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.spec import RawArgs, ToolContext, ToolOutput, ToolSpec

MAX_NAME_CHARS = 64
"""Chat-Completions function names are at most this long."""

MAX_DESCRIPTION_CHARS = 2_000
"""A server's tool description is cut to this many characters."""

BUDGET_NAME = "mcp"
"""Results are cut to ``services.tool.mcp.max_output_chars`` (default 30,000)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

ToolCaller = Callable[[str, str, dict[str, Any], ToolContext], Awaitable[types.CallToolResult]]
"""``(server, tool, arguments, ctx)`` → the server's result (raises ``ToolError``)."""


def qualified_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """``mcp__<server>__<tool>``, made a valid function name and unique among ``taken``."""
    base = f"{TOOL_PREFIX}{server}__{_UNSAFE.sub('_', tool)}"[:MAX_NAME_CHARS]
    used = set(taken)
    name, n = base, 2
    while name in used:
        suffix = f"_{n}"
        name = base[: MAX_NAME_CHARS - len(suffix)] + suffix
        n += 1
    return name


def _schema(tool: types.Tool) -> dict[str, Any]:
    schema = {k: v for k, v in tool.input_schema.items() if k not in ("$schema", "title")}
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def _description(server: str, tool: types.Tool) -> str:
    text = (tool.description or tool.title or tool.name).strip()
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return f"[MCP server {server}] {text}"


def tool_spec(
    server: str,
    tool: types.Tool,
    *,
    roles: Iterable[str],
    call: ToolCaller,
    taken: Iterable[str] = (),
) -> ToolSpec[Any]:
    """The :class:`ToolSpec` of ``tool`` of ``server``, offered to ``roles``."""
    name = qualified_name(server, tool.name, taken)
    read_only = bool(tool.annotations and tool.annotations.read_only_hint)

    async def handler(args: RawArgs, ctx: ToolContext) -> ToolOutput:
        result = await call(server, tool.name, args.model_dump(), ctx)
        output = to_output(result, max_output_chars(ctx, BUDGET_NAME))
        output.metadata.update({"server": server, "tool": tool.name})
        if not read_only:
            output.mutation_state = "attempted"
        return output

    return ToolSpec(
        name=name,
        description=_description(server, tool),
        args=RawArgs,
        handler=handler,
        role_allowlist=frozenset(roles),
        mutating=not read_only,
        raw_schema=_schema(tool),
    )


def _size(data: str) -> str:
    raw = len(data) * 3 // 4  # base64
    return f"{raw / 1024:.0f} KiB" if raw >= 1024 else f"{raw} bytes"


def _link(uri: str, name: str | None = None, mime: str | None = None) -> str:
    label = f"{name} " if name and name != uri else ""
    kind = f" ({mime})" if mime else ""
    return f"[resource: {label}<{uri}>{kind}]"


def _part(block: Any, counts: dict[str, int]) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        counts["images"] += 1
        return f"[image ({block.mime_type}, {_size(block.data)}) returned by the tool; not shown]"
    if isinstance(block, types.AudioContent):
        counts["audio"] += 1
        return f"[audio ({block.mime_type}, {_size(block.data)}) returned by the tool; not shown]"
    if isinstance(block, types.ResourceLink):
        counts["resources"] += 1
        return _link(str(block.uri), block.name, block.mime_type)
    if isinstance(block, types.EmbeddedResource):
        counts["resources"] += 1
        res = block.resource
        link = _link(str(res.uri), None, res.mime_type)
        if isinstance(res, types.TextResourceContents):
            return f"{link}\n{res.text}"
        return f"{link} {_size(res.blob)} of binary data, not shown"
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content returned by the tool; not shown]"


def to_output(result: types.CallToolResult, max_chars: int) -> ToolOutput:
    """A server's tool result as our :class:`ToolOutput`, cut to ``max_chars``."""
    counts = {"images": 0, "audio": 0, "resources": 0}
    parts = [_part(block, counts) for block in result.content]
    if not any(part.strip() for part in parts) and result.structured_content is not None:
        parts = [json.dumps(result.structured_content, ensure_ascii=False, indent=2)]
    text = "\n".join(parts).strip() or "(the tool returned no content)"
    text = budget_text(text, max_chars)
    metadata: dict[str, Any] = {key: n for key, n in counts.items() if n}
    if result.is_error:
        return ToolOutput(content=f"error: {text}", ok=False, error=text, metadata=metadata)
    return ToolOutput(content=text, metadata=metadata)


def prompt_text(result: types.GetPromptResult) -> str:
    """A server prompt's messages as one text (for a prompt used as a slash command)."""
    parts: list[str] = []
    counts = {"images": 0, "audio": 0, "resources": 0}
    for message in result.messages:
        parts.append(_part(message.content, counts))
    return "\n\n".join(part for part in parts if part.strip())


def resource_text(result: types.ReadResourceResult) -> str:
    """A resource's contents as one text (binary parts become a note saying so)."""
    parts: list[str] = []
    for content in result.contents:
        if isinstance(content, types.TextResourceContents):
            parts.append(content.text)
        else:
            blob = getattr(content, "blob", "")
            link = _link(str(content.uri), None, content.mime_type)
            parts.append(f"{link} {_size(blob)} of binary data, not attached")
    return "\n".join(parts)
