"""The ``web_fetch`` tool: GET one http(s) URL and return it as readable text.

HTML becomes Markdown (scripts, styles and other non-content dropped, relative
links made absolute), JSON is pretty-printed, other text is returned as is and
binary content is described instead of shown. Reads stop at a byte cap;
redirects are followed by hand (at most five) so every hop is checked.
Settings under ``services.tool.web_fetch``: ``timeout`` (seconds),
``max_bytes``, ``max_output_chars``.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import httpx
from bs4 import BeautifulSoup
from markdownify import MarkdownConverter

from smith_tui.tools.args import max_output_chars, require_str, setting_number, tool_settings
from smith_tui.tools.budget import budget_text
from smith_tui.tools.cancellable import until_cancelled
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput, ToolSpec

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "smith-tui/0.1 (web_fetch)"
ACCEPT = "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5"
# Elements whose content is never page text.
# (``head`` itself is kept: html.parser does not close an unclosed head, so dropping it
# could drop the whole page of sloppy HTML.)
DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
    "canvas",
    "title",
    "meta",
    "link",
    "base",
)
TEXTUAL_APP_TYPES = {
    "application/javascript",
    "application/ecmascript",
    "application/x-javascript",
    "application/xml",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
    "application/graphql",
    "application/x-www-form-urlencoded",
}


@dataclass
class Fetched:
    """The raw outcome of a GET after redirects."""

    url: str
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    declared_length: int | None
    redirects: list[str]


def _check_url(raw: str, *, hop: str = "") -> httpx.URL:
    """Parse and vet a URL: http(s) with a host, or a ToolError saying what to fix."""
    text = raw.strip()
    where = f" (redirect target{hop})" if hop else ""
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, ValueError) as exc:
        raise ToolError(f"malformed URL{where} {text!r:.200}: {exc}.", code="bad_url") from None
    if not url.scheme:
        raise ToolError(
            f"URL{where} {text!r:.200} has no scheme; use a full http(s) URL such as "
            f"'https://{text.lstrip('/')}'.",
            code="bad_url",
        )
    if url.scheme not in ("http", "https"):
        raise ToolError(
            f"URL{where} {text!r:.200} uses the '{url.scheme}' scheme; web_fetch only fetches "
            f"http:// and https:// URLs (read local files with the read tool).",
            code="bad_url",
        )
    if not url.host:
        raise ToolError(f"URL{where} {text!r:.200} has no host name.", code="bad_url")
    if re.search(r"[\s%]", url.host) or re.search(r"\s", text):
        raise ToolError(
            f"malformed URL{where} {text!r:.200}: it contains spaces (encode them as %20 in "
            f"the path or query; host names cannot contain them).",
            code="bad_url",
        )
    if url.port is not None and not 0 < url.port < 65536:
        raise ToolError(
            f"malformed URL{where} {text!r:.200}: port {url.port} is out of range.",
            code="bad_url",
        )
    return url


def _media_type(header: str) -> tuple[str, str | None]:
    """Split a Content-Type header into (lowercase media type, charset or None)."""
    parts = [part.strip() for part in header.split(";")]
    media = parts[0].lower() if parts else ""
    charset = None
    for part in parts[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media, charset


def _kind(media: str, body: bytes) -> str:
    """Classify content as ``html``, ``json``, ``text`` or ``binary``."""
    if media in ("text/html", "application/xhtml+xml"):
        return "html"
    if media == "application/json" or media.endswith("+json"):
        return "json"
    if media.startswith("text/") or media.endswith("+xml") or media in TEXTUAL_APP_TYPES:
        return "text"
    if media and media not in ("application/octet-stream", "binary/octet-stream"):
        return "binary"
    # No (or a generic) type: sniff the first bytes.
    head = body[:1024]
    if b"\x00" in head:
        return "binary"
    lowered = head.lstrip().lower()
    if lowered.startswith((b"<!doctype html", b"<html")):
        return "html"
    if lowered.startswith((b"{", b"[")):
        return "json"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multibyte character cut at the 1 KB boundary is still text.
        if exc.start < len(head) - 4:
            return "binary"
    return "text" if not media else "binary"


def _decode(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # an unknown charset name from the server
        return body.decode("utf-8", errors="replace")


def html_to_markdown(
    html: bytes | str, base_url: str, charset: str | None = None
) -> tuple[str, str]:
    """Convert an HTML document to Markdown; returns (title, markdown).

    Scripts, styles and similar non-content elements are removed first, and
    relative link and image targets are resolved against ``base_url``.
    """
    if isinstance(html, bytes):
        soup = BeautifulSoup(html, "html.parser", from_encoding=charset)
    else:
        soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = re.sub(r"\s+", " ", title_tag.get_text()).strip() if title_tag else ""
    for tag in soup.find_all(DROP_TAGS):
        tag.decompose()
    for attr, tags in (("href", ("a",)), ("src", ("img",))):
        for tag in soup.find_all(tags):
            value = tag.get(attr)
            if isinstance(value, str) and value and not value.startswith(("#", "data:")):
                tag[attr] = urljoin(base_url, value)
    markdown = MarkdownConverter(
        heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False
    ).convert_soup(soup)
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    return title, markdown


def _pretty_json(text: str) -> tuple[str, bool]:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False), True
    except (json.JSONDecodeError, RecursionError):
        return text, False


async def _get(url: httpx.URL, *, io_timeout_s: float, max_bytes: int) -> Fetched:
    """GET ``url`` following up to ``MAX_REDIRECTS`` redirects, reading at most ``max_bytes``."""
    seen = [str(url)]
    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT}
    async with httpx.AsyncClient(timeout=io_timeout_s, follow_redirects=False) as client:
        while True:
            async with client.stream("GET", url, headers=headers) as response:
                if response.is_redirect and "location" in response.headers:
                    location = response.headers["location"]
                    target = _check_url(
                        urljoin(str(url), location), hop=f" #{len(seen)} from {url}"
                    )
                    if str(target) in seen:
                        chain = " -> ".join([*seen, str(target)])
                        raise ToolError(
                            f"redirect loop: {chain}. The site keeps redirecting; try another URL.",
                            code="redirect_loop",
                        )
                    if len(seen) > MAX_REDIRECTS:
                        raise ToolError(
                            f"too many redirects (more than {MAX_REDIRECTS}) starting at "
                            f"{seen[0]}; last target {target}. Fetch the final URL directly "
                            f"if you know it.",
                            code="too_many_redirects",
                        )
                    seen.append(str(target))
                    url = target
                    continue
                media_header = response.headers.get("content-type", "")
                media, charset = _media_type(media_header)
                declared = response.headers.get("content-length")
                declared_length = int(declared) if declared and declared.isdigit() else None
                chunks: list[bytes] = []
                size = 0
                truncated = False
                sniff_only = bool(media) and _kind(media, b"") == "binary"
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size >= max_bytes or (sniff_only and size >= 1024):
                        truncated = True
                        break
                body = b"".join(chunks)
                if size > max_bytes:
                    body = body[:max_bytes]
                if truncated and declared_length is not None and declared_length <= len(body):
                    truncated = False
                return Fetched(
                    url=str(url),
                    status=response.status_code,
                    reason=response.reason_phrase,
                    content_type=media,
                    charset=charset,
                    body=body,
                    truncated=truncated,
                    declared_length=declared_length,
                    redirects=seen[1:],
                )


async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    """Fetch ``args['url']`` and return its content as text."""
    url = _check_url(require_str(args, "url"))
    settings = tool_settings(ctx, "web_fetch")
    timeout = setting_number(settings, "timeout", DEFAULT_TIMEOUT_S, tool="web_fetch")
    max_bytes = int(setting_number(settings, "max_bytes", DEFAULT_MAX_BYTES, tool="web_fetch"))
    budget = max_output_chars(ctx, "web_fetch")
    try:
        # The per-operation httpx timeout does not bound a slow trickle; this does.
        fetched = await until_cancelled(
            ctx, asyncio.wait_for(_get(url, io_timeout_s=timeout, max_bytes=max_bytes), timeout * 2)
        )
    except asyncio.CancelledError:
        if ctx.is_cancelled():
            return ToolOutput(content=f"fetch of {url} cancelled.", ok=False, error="cancelled")
        raise
    except (httpx.TimeoutException, TimeoutError):
        raise ToolError(
            f"{url} did not answer within {timeout:g} s; try again later or another source.",
            code="timeout",
        ) from None
    except httpx.HTTPError as exc:
        raise ToolError(
            f"could not fetch {url}: {exc or type(exc).__name__}. Check the URL (host name, "
            f"port) or try another source.",
            code="network_error",
        ) from None

    kind = _kind(fetched.content_type, fetched.body)
    size_note = (
        f"{fetched.declared_length:,} bytes" if fetched.declared_length is not None else None
    )
    if fetched.status >= 400:
        excerpt = ""
        if kind in ("html", "text", "json") and fetched.body:
            text = _decode(fetched.body[:4000], fetched.charset)
            if kind == "html":
                text = html_to_markdown(fetched.body[:20000], fetched.url, fetched.charset)[1]
            excerpt = " Page says: " + re.sub(r"\s+", " ", text).strip()[:300]
        raise ToolError(
            f"HTTP {fetched.status} {fetched.reason} from {fetched.url}.{excerpt} "
            f"Check the URL, or search for the right page with web_search.",
            code="http_error",
            data={"status": fetched.status, "url": fetched.url},
        )

    header = [f"URL: {fetched.url}"]
    if fetched.redirects:
        header.append(f"(redirected from {url})")
    header.append(f"Content-Type: {fetched.content_type or 'unknown'}")
    metadata: dict[str, Any] = {
        "url": str(url),
        "final_url": fetched.url,
        "status": fetched.status,
        "content_type": fetched.content_type,
        "kind": kind,
        "bytes_read": len(fetched.body),
        "truncated": fetched.truncated,
        "redirects": fetched.redirects,
    }
    if kind == "binary":
        size = size_note or (
            f"more than {len(fetched.body):,} bytes"
            if fetched.truncated
            else f"{len(fetched.body):,} bytes"
        )
        body = (
            f"Binary content ({fetched.content_type or 'unknown type'}, {size}); not shown. "
            f"web_fetch returns text only; download it with bash (curl -o) if you need the file."
        )
        return ToolOutput(content="\n".join(header) + "\n\n" + body, metadata=metadata)

    if kind == "html":
        title, body = html_to_markdown(fetched.body, fetched.url, fetched.charset)
        if title:
            header.append(f"Title: {title}")
    elif kind == "json":
        body, parsed = _pretty_json(_decode(fetched.body, fetched.charset))
        if not parsed:
            header.append(
                "(not valid JSON"
                + (", because the download was cut" if fetched.truncated else "")
                + "; shown as received)"
            )
    else:
        body = _decode(fetched.body, fetched.charset)
    if fetched.truncated:
        total = size_note or "unknown total size"
        header.append(
            f"[download stopped at the {max_bytes:,}-byte limit ({total}); the end of the "
            f"document is missing]"
        )
    text = "\n".join(header) + "\n\n" + (body if body.strip() else "(no text content)")
    return ToolOutput(content=budget_text(text, budget), metadata=metadata)


TOOL = ToolSpec(
    name="web_fetch",
    description=(
        "Fetch one http(s) URL and return its content as text: HTML pages are converted to "
        "Markdown (headings, lists, links kept), JSON is pretty-printed, plain text is returned "
        "as is; images, PDFs and other binary files are only described. Follows up to 5 "
        "redirects; large pages are cut (the note says so). Use web_search to find URLs."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "description": "Absolute http:// or https:// URL to fetch.",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    },
    handler=handler,
)
