"""The ``web_search`` tool: a web search through the Linkup API.

Settings live under ``services.tool.web_search``: ``api_key_env`` (name of the
environment variable holding the key, default ``LINKUP_API_KEY``),
``endpoint``, ``depth``, ``output_type``, ``max_results``, ``timeout``
(seconds) and ``max_output_chars``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import TYPE_CHECKING, Any

from pydantic import Field

from smith_tui.config.service_options import WebSearchOptions
from smith_tui.tools.args import Text, max_output_chars
from smith_tui.tools.cancellable import until_cancelled
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

if TYPE_CHECKING:
    import httpx  # imported by the first request (see smith_tui/llm/client.py)

SNIPPET_CHARS = 600


def _request_body(query: str, options: WebSearchOptions) -> dict[str, Any]:
    body: dict[str, Any] = {"q": query, "depth": options.depth, "outputType": options.output_type}
    if "max_results" in options.model_fields_set:  # else the service's own default
        body["maxResults"] = options.max_results
    return body


def _one_line(text: str, limit: int) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _format(payload: Any, query: str) -> tuple[str, int]:
    """Turn a Linkup response into text; returns the text and the number of results."""
    if not isinstance(payload, dict):
        raise ToolError(
            f"the search service returned JSON of an unexpected shape ({type(payload).__name__}, "
            f"expected an object); try again later or use web_fetch on a known URL.",
            code="bad_response",
        )
    lines: list[str] = []
    answer = payload.get("answer")
    if isinstance(answer, str) and answer.strip():
        lines += ["Answer:", answer.strip(), ""]
    items = payload.get("results")
    if items is None:
        items = payload.get("sources")
    if not isinstance(items, list):
        items = []
    count = 0
    for item in items:
        if not isinstance(item, dict):
            continue
        count += 1
        title = _one_line(str(item.get("name") or item.get("title") or "(untitled)"), 200)
        url = str(item.get("url") or "").strip()
        snippet = item.get("content") or item.get("snippet") or ""
        lines.append(f"{count}. {title}")
        if url:
            lines.append(f"   {url}")
        if isinstance(snippet, str) and snippet.strip():
            lines.append(f"   {_one_line(snippet, SNIPPET_CHARS)}")
        lines.append("")
    if count == 0 and not lines:
        other = {k: v for k, v in payload.items() if k not in ("results", "sources")}
        if other:  # e.g. outputType "structured": show what came back
            return json.dumps(other, indent=2, ensure_ascii=False), 0
        return f"No results for {query!r}. Try different or broader terms.", 0
    header = f"Search results for {query!r} ({count}):\n\n" if count else ""
    return header + "\n".join(lines).rstrip(), count


def _http_error(response: httpx.Response, key_env: str) -> ToolError:
    status = response.status_code
    detail = _one_line(response.text, 300) if response.content else "(empty body)"
    if status in (401, 403):
        message = (
            f"the search service rejected the API key (HTTP {status}: {detail}). The key in "
            f"${key_env} is wrong or expired; ask the user to fix it. Continue without web search."
        )
    elif status == 429:
        message = (
            f"the search service is rate limiting (HTTP 429: {detail}); wait before searching "
            f"again, or continue without web search."
        )
    else:
        message = (
            f"the search service answered HTTP {status}: {detail}. "
            f"Try again later or rephrase the query."
        )
    return ToolError(message, code="http_error", data={"status": status})


class Args(ToolArgs):
    """Arguments of ``web_search``."""

    query: Text = Field(description="What to search for, in natural language or keywords.")


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Search the web for ``args.query`` and return titles, URLs and snippets."""
    query = args.query.strip()
    options = ctx.config.services.tool.web_search
    key_env, endpoint, timeout = options.api_key_env, options.endpoint, options.timeout
    body = _request_body(query, options)
    api_key = os.environ.get(key_env, "").strip()
    if not api_key:
        raise ToolError(
            f"web search is not configured: the environment variable {key_env} holding the "
            f"Linkup API key is not set (the variable's name comes from "
            f"services.tool.web_search.api_key_env). Tell the user, and continue without web "
            f"search (web_fetch still works for known URLs).",
            code="not_configured",
        )
    headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
    import httpx

    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await until_cancelled(ctx, client.post(endpoint, json=body, headers=headers))
    except asyncio.CancelledError:
        if ctx.is_cancelled():
            return ToolOutput(content="search cancelled.", ok=False, error="cancelled")
        raise
    except httpx.TimeoutException:
        raise ToolError(
            f"the search service did not answer within {timeout:g} s; try again or narrow "
            f"the query.",
            code="timeout",
        ) from None
    except httpx.HTTPError as exc:
        raise ToolError(
            f"could not reach the search service at {endpoint}: {exc}. Check the network or "
            f"services.tool.web_search.endpoint.",
            code="network_error",
        ) from None
    if response.status_code >= 400:
        raise _http_error(response, key_env)
    try:
        payload = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ToolError(
            f"the search service returned something that is not JSON (HTTP "
            f"{response.status_code}, starts with {_one_line(response.text, 120)!r}); try again "
            f"later.",
            code="bad_response",
        ) from None
    text, count = _format(payload, query)
    return ToolOutput(
        content=budget_text(text, max_output_chars(ctx, "web_search")),
        metadata={"query": query, "results": count, "endpoint": endpoint},
    )


TOOL = ToolSpec(
    name="web_search",
    description=(
        "Search the web. Returns a numbered list of results, each with title, URL and a "
        "snippet. Use specific queries (names, versions, error messages); open a promising "
        "result with web_fetch to read it in full."
    ),
    args=Args,
    handler=handler,
)
