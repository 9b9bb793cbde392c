"""The ``web_fetch`` tool: GET one http(s) URL and return it as readable text.

HTML becomes Markdown (scripts, styles and other non-content dropped, relative
links made absolute), JSON is pretty-printed, other text is returned as is and
binary content is described instead of shown. Reads stop at a byte cap;
redirects are followed by hand (at most five) so every hop is checked.

Each hop's host is resolved once and the request goes to exactly the address
that was checked (the Host header and TLS server name stay the host name), so a
second DNS answer cannot swap in another address. Unless ``allow_private`` is
set, loopback, private, link-local and other non-public addresses are refused.
Connections are direct: proxy environment variables are not used, since a proxy
would resolve the name itself.

HTML conversion runs in a worker thread on at most ``MAX_HTML_BYTES`` of the
page, and elements nested deeper than ``MAX_HTML_DEPTH`` are kept as plain text
(the converter recurses per level).

Settings under ``services.tool.web_fetch``: ``timeout`` (seconds),
``max_bytes``, ``max_output_chars``, ``allow_private``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from pydantic import Field

from smith_tui.tools.args import Text
from smith_tui.tools.cancellable import until_cancelled
from smith_tui.tools.output_budget import budget_text
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec

if TYPE_CHECKING:
    import httpx  # imported by the first fetch (see smith_tui/llm/client.py)

    # bs4 and markdownify are imported when a page is converted: importing them costs every
    # start of smith about 55 ms, and most sessions never fetch a page.
    from bs4 import BeautifulSoup, Tag

MAX_REDIRECTS = 5
MAX_HTML_BYTES = 1024 * 1024
"""Most bytes of an HTML page converted to Markdown (about 3 s of work on a slow machine)."""
MAX_HTML_DEPTH = 128
"""Elements nested deeper than this become plain text (markdownify recurses about three
Python frames per level, so this stays well inside the default recursion limit)."""
ERROR_HTML_BYTES = 20_000
"""Bytes of an HTTP error page converted for its excerpt."""
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


@dataclass
class Converted:
    """An HTML page as Markdown, with what was left out to keep the conversion bounded."""

    title: str
    markdown: str
    cut_at: int | None = None
    """Bytes converted when the page was longer than the cap, else None."""
    flattened: bool = False
    """Whether elements nested deeper than the depth cap were kept as plain text only."""


def _check_url(raw: str, *, hop: str = "") -> httpx.URL:
    """Parse and vet a URL: http(s) with a host, or a ToolError saying what to fix."""
    import httpx

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


def _flatten_deep(soup: BeautifulSoup, max_depth: int) -> bool:
    """Replace each element nested deeper than ``max_depth`` by its text; True if any was.

    Walks the tree with an explicit stack, since bs4 and markdownify recurse per level.
    """
    from bs4 import NavigableString, Tag

    flattened = False
    stack: list[tuple[Tag, int]] = [(soup, 0)]
    while stack:
        parent, depth = stack.pop()
        for child in list(parent.contents):
            if not isinstance(child, Tag):
                continue
            if depth + 1 <= max_depth:
                stack.append((child, depth + 1))
            else:
                child.replace_with(NavigableString(child.get_text(" ")))
                flattened = True
    return flattened


def _cut_before_open_tag(html: bytes | str) -> bytes | str:
    """``html`` without a tag left unfinished at its end (it would show up as text)."""
    if isinstance(html, bytes):
        lt, gt = html.rfind(b"<"), html.rfind(b">")
    else:
        lt, gt = html.rfind("<"), html.rfind(">")
    return html[:lt] if lt > gt else html


def html_to_markdown(
    html: bytes | str,
    base_url: str,
    charset: str | None = None,
    *,
    max_bytes: int = MAX_HTML_BYTES,
    max_depth: int = MAX_HTML_DEPTH,
) -> Converted:
    """Convert an HTML document to Markdown.

    Scripts, styles and similar non-content elements are removed first, and
    relative link and image targets are resolved against ``base_url``. Only the
    first ``max_bytes`` of the document are converted, and elements nested deeper
    than ``max_depth`` become plain text; the result says when either happened.
    CPU-bound: call it through :func:`convert_html` from async code.
    """
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    cut_at = max_bytes if len(html) > max_bytes else None
    if cut_at is not None:
        html = _cut_before_open_tag(html[:max_bytes])
    if isinstance(html, bytes):
        soup = BeautifulSoup(html, "html.parser", from_encoding=charset)
    else:  # already text: the cap counts characters
        soup = BeautifulSoup(html, "html.parser")
    title_tag = soup.find("title")
    title = re.sub(r"\s+", " ", title_tag.get_text()).strip() if title_tag else ""
    for tag in soup.find_all(DROP_TAGS):
        if not tag.decomposed:  # not already gone with a dropped ancestor (fast when nested)
            tag.decompose()
    flattened = _flatten_deep(soup, max_depth)
    for attr, tags in (("href", ("a",)), ("src", ("img",))):
        for tag in soup.find_all(tags):
            value = tag.get(attr)
            if isinstance(value, str) and value and not value.startswith(("#", "data:")):
                tag[attr] = urljoin(base_url, value)
    markdown = MarkdownConverter(
        heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False
    ).convert_soup(soup)
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    return Converted(title, markdown, cut_at, flattened)


async def convert_html(html: bytes, base_url: str, charset: str | None = None) -> Converted:
    """:func:`html_to_markdown` in a worker thread, so a big page never stalls the event loop."""
    return await asyncio.to_thread(
        html_to_markdown,
        html,
        base_url,
        charset,
        max_bytes=MAX_HTML_BYTES,
        max_depth=MAX_HTML_DEPTH,
    )


def _pretty_json(text: str) -> tuple[str, bool]:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False), True
    except (json.JSONDecodeError, RecursionError):
        return text, False


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
ALLOW_PRIVATE_SETTING = "services.tool.web_fetch.allow_private"


def address_problem(address: str) -> str | None:
    """What kind of non-public address ``address`` is ("loopback", "private", ...), or None.

    IPv4 addresses carried in IPv6 (IPv4-mapped ``::ffff:a.b.c.d``, NAT64
    ``64:ff9b::/96``) are judged by the IPv4 address they carry.
    """
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(
        address.partition("%")[0]  # an IPv6 zone (fe80::1%eth0) is not part of the address
    )
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        elif ip.is_site_local:
            return "site-local"
    for kind, applies in (
        ("loopback", ip.is_loopback),
        ("unspecified", ip.is_unspecified),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("non-public", not ip.is_global),
    ):
        if applies:
            return kind
    return None


async def resolve(host: str, port: int) -> list[str]:
    """The IP addresses of ``host`` in the resolver's order (getaddrinfo in a worker thread)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def _vetted_addresses(url: httpx.URL, *, allow_private: bool, hop: str) -> list[str]:
    """Resolve ``url``'s host once; all its addresses, each checked unless ``allow_private``."""
    host = url.raw_host.decode("ascii")
    try:
        addresses = await resolve(host, url.port or (443 if url.scheme == "https" else 80))
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise ToolError(
            f"could not resolve the host {host!r} of {url}{hop}: {reason}. Check the host name.",
            code="network_error",
        ) from None
    if not addresses:
        raise ToolError(f"the host {host!r} of {url}{hop} has no address.", code="network_error")
    if not allow_private:
        for address in addresses:
            kind = address_problem(address)
            if kind is None:
                continue
            via = "is" if address == host else f"resolves to {address}, which is"
            raise ToolError(
                f"refused to fetch {url}{hop}: {host} {via} a {kind} address, and web_fetch "
                f"only fetches public internet addresses. To reach local or private servers, "
                f"set {ALLOW_PRIVATE_SETTING} = true in the config.",
                code="private_address",
                data={"url": str(url), "address": address, "kind": kind},
            )
    return addresses


async def _send_pinned(
    client: httpx.AsyncClient, url: httpx.URL, addresses: list[str]
) -> httpx.Response:
    """Start a streamed GET of ``url`` connected to one of ``addresses``, tried in order.

    The URL names the address, so nothing resolves the host again; the Host header and
    the TLS server name (SNI, also the name the certificate must match) stay the host's.
    """
    import httpx

    headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT, "Host": url.netloc.decode("ascii")}
    extensions = {"sni_hostname": url.raw_host.decode("ascii")} if url.scheme == "https" else {}

    def request_to(address: str) -> httpx.Request:
        return client.build_request(
            "GET", url.copy_with(host=address), headers=headers, extensions=extensions
        )

    for address in addresses[:-1]:
        try:
            return await client.send(request_to(address), stream=True)
        except httpx.ConnectError:
            continue
    return await client.send(request_to(addresses[-1]), stream=True)


async def _get(
    url: httpx.URL, *, io_timeout_s: float, max_bytes: int, allow_private: bool
) -> Fetched:
    """GET ``url`` following up to ``MAX_REDIRECTS`` redirects, reading at most ``max_bytes``.

    Every hop is resolved, checked and connected to by address (see ``_send_pinned``).
    """
    import httpx

    seen = [str(url)]
    tls = httpx.create_ssl_context()
    hop = ""
    while True:
        addresses = await _vetted_addresses(url, allow_private=allow_private, hop=hop)
        # A client per hop: pooled connections are keyed by address, and one made for
        # another host name (another TLS server name) must not be reused.
        transport = httpx.AsyncHTTPTransport(verify=tls)
        async with httpx.AsyncClient(transport=transport, timeout=io_timeout_s) as client:
            response = await _send_pinned(client, url, addresses)
            try:
                if response.is_redirect and "location" in response.headers:
                    location = response.headers["location"]
                    number = len(seen)
                    target = _check_url(urljoin(str(url), location), hop=f" #{number} from {url}")
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
                    hop = f" (redirect #{number} from {url})"
                    url = target
                    continue
                return await _read(response, url, max_bytes, seen[1:])
            finally:
                await response.aclose()


async def _read(
    response: httpx.Response, url: httpx.URL, max_bytes: int, redirects: list[str]
) -> Fetched:
    """Read a final response's body, at most ``max_bytes`` (1 KB of known binary types)."""
    media, charset = _media_type(response.headers.get("content-type", ""))
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
        redirects=redirects,
    )


class Args(ToolArgs):
    """Arguments of ``web_fetch``."""

    url: Text = Field(description="Absolute http:// or https:// URL to fetch.")


async def handler(args: Args, ctx: ToolContext) -> ToolOutput:
    """Fetch ``args.url`` and return its content as text."""
    url = _check_url(args.url)
    options = ctx.config.services.tool.web_fetch
    try:
        return await _fetch_as_text(
            ctx,
            url,
            io_timeout_s=options.timeout,
            max_bytes=options.max_bytes,
            allow_private=options.allow_private,
            budget=options.max_output_chars,
        )
    except asyncio.CancelledError:
        if ctx.is_cancelled():
            return ToolOutput(content=f"fetch of {url} cancelled.", ok=False, error="cancelled")
        raise


async def _fetch_as_text(
    ctx: ToolContext,
    url: httpx.URL,
    *,
    io_timeout_s: float,
    max_bytes: int,
    allow_private: bool,
    budget: int,
) -> ToolOutput:
    """The tool's work: fetch ``url`` and render the result (CancelledError on a cancel)."""
    fetched = await _download(
        ctx, url, io_timeout_s=io_timeout_s, max_bytes=max_bytes, allow_private=allow_private
    )
    kind = _kind(fetched.content_type, fetched.body)
    size_note = (
        f"{fetched.declared_length:,} bytes" if fetched.declared_length is not None else None
    )
    if fetched.status >= 400:
        raise await _http_error(ctx, fetched, kind)

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

    body = await _text_body(ctx, fetched, kind, header, metadata)
    if fetched.truncated:
        total = size_note or "unknown total size"
        header.append(
            f"[download stopped at the {max_bytes:,}-byte limit ({total}); the end of the "
            f"document is missing]"
        )
    text = "\n".join(header) + "\n\n" + (body if body.strip() else "(no text content)")
    return ToolOutput(content=budget_text(text, budget), metadata=metadata)


async def _download(
    ctx: ToolContext,
    url: httpx.URL,
    *,
    io_timeout_s: float,
    max_bytes: int,
    allow_private: bool,
) -> Fetched:
    """GET ``url`` within twice the I/O timeout; a timeout or network error says so."""
    import httpx

    try:
        # The per-operation httpx timeout does not bound a slow trickle; this does.
        return await until_cancelled(
            ctx,
            asyncio.wait_for(
                _get(
                    url, io_timeout_s=io_timeout_s, max_bytes=max_bytes, allow_private=allow_private
                ),
                io_timeout_s * 2,
            ),
        )
    except (httpx.TimeoutException, TimeoutError):
        raise ToolError(
            f"{url} did not answer within {io_timeout_s:g} s; try again later or another source.",
            code="timeout",
        ) from None
    except httpx.HTTPError as exc:
        raise ToolError(
            f"could not fetch {url}: {exc or type(exc).__name__}. Check the URL (host name, "
            f"port) or try another source.",
            code="network_error",
        ) from None


async def _http_error(ctx: ToolContext, fetched: Fetched, kind: str) -> ToolError:
    """The error of an HTTP error status, with the start of what the page says."""
    excerpt = ""
    if kind in ("html", "text", "json") and fetched.body:
        text = _decode(fetched.body[:4000], fetched.charset)
        if kind == "html":
            page = fetched.body[:ERROR_HTML_BYTES]
            text = (
                await until_cancelled(ctx, convert_html(page, fetched.url, fetched.charset))
            ).markdown
        excerpt = " Page says: " + re.sub(r"\s+", " ", text).strip()[:300]
    return ToolError(
        f"HTTP {fetched.status} {fetched.reason} from {fetched.url}.{excerpt} "
        f"Check the URL, or search for the right page with web_search.",
        code="http_error",
        data={"status": fetched.status, "url": fetched.url},
    )


async def _text_body(
    ctx: ToolContext, fetched: Fetched, kind: str, header: list[str], metadata: dict[str, Any]
) -> str:
    """The text of an html, json or text page; its notes go to ``header`` and ``metadata``."""
    if kind == "html":
        converted = await until_cancelled(
            ctx, convert_html(fetched.body, fetched.url, fetched.charset)
        )
        if converted.title:
            header.append(f"Title: {converted.title}")
        if converted.cut_at is not None:
            header.append(
                f"[only the first {converted.cut_at:,} bytes of the HTML were converted; "
                f"the rest of the page is not shown]"
            )
        if converted.flattened:
            header.append(
                f"[parts nested more than {MAX_HTML_DEPTH} elements deep are shown as plain text]"
            )
        metadata["html_cut_at"] = converted.cut_at
        metadata["html_flattened"] = converted.flattened
        return converted.markdown
    if kind == "json":
        body, parsed = _pretty_json(_decode(fetched.body, fetched.charset))
        if not parsed:
            header.append(
                "(not valid JSON"
                + (", because the download was cut" if fetched.truncated else "")
                + "; shown as received)"
            )
        return body
    return _decode(fetched.body, fetched.charset)


TOOL = ToolSpec(
    name="web_fetch",
    description=(
        "Fetch one http(s) URL and return its content as text: HTML pages are converted to "
        "Markdown (headings, lists, links kept), JSON is pretty-printed, plain text is returned "
        "as is; images, PDFs and other binary files are only described. Follows up to 5 "
        "redirects; large pages are cut (the note says so). Use web_search to find URLs. "
        "Local and private network addresses (localhost, 10.x, 192.168.x, ...) are refused "
        "unless the user sets services.tool.web_fetch.allow_private."
    ),
    args=Args,
    handler=handler,
)
