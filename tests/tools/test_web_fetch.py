"""The web_fetch tool against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools.spec import ToolContext, ToolError
from smith_tui.tools.web_fetch import TOOL, handler, html_to_markdown

Reply = tuple[int, dict[str, str], bytes]


@dataclass
class Recorded:
    """One request the local server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class LocalServer:
    """A tiny threaded HTTP server whose routes are plain functions."""

    routes: dict[str, Callable[[Recorded], Reply]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)

    def start(self) -> LocalServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                record = Recorded(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length) if length else b"",
                )
                server.requests.append(record)
                route = server.routes.get(self.path.split("?")[0])
                status, headers, body = route(record) if route else (404, {}, b"no such page")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = _serve
            do_POST = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    @property
    def base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def server() -> Iterator[LocalServer]:
    local = LocalServer().start()
    try:
        yield local
    finally:
        local.stop()


def make_ctx(config: dict[str, Any] | None = None) -> ToolContext:
    return ToolContext(
        role="explorer",
        turn_id="turn1",
        cwd=Path("/"),
        cancel=CancelToken.new_root(),
        config=config or {},
    )


def fetch_config(**settings: Any) -> dict[str, Any]:
    return {"services": {"tool": {"web_fetch": settings}}}


PAGE = b"""<!doctype html>
<html><head><title>Release  notes</title>
<style>body { color: red; } .secret-style {}</style>
<script>var secretScript = 1;</script></head>
<body>
<h1>Version 2.0</h1>
<p>See the <a href="/docs/upgrade">upgrade guide</a> and <a href="https://example.org/x">x</a>.</p>
<h2>Changes</h2>
<ul><li>faster</li><li>smaller</li></ul>
<noscript>enable js</noscript>
<script>alert("secretScript2")</script>
</body></html>"""


def test_spec_shape() -> None:
    assert TOOL.name == "web_fetch"
    assert not TOOL.mutating
    assert TOOL.input_schema["required"] == ["url"]


async def test_html_becomes_markdown(server: LocalServer) -> None:
    server.routes["/page"] = lambda _: (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE)
    out = await handler({"url": f"{server.base}/page"}, make_ctx())
    assert f"URL: {server.base}/page" in out.content
    assert "Title: Release notes" in out.content
    assert "# Version 2.0" in out.content
    assert "## Changes" in out.content
    assert f"[upgrade guide]({server.base}/docs/upgrade)" in out.content
    assert "[x](https://example.org/x)" in out.content
    assert "- faster" in out.content
    for gone in ("secretScript", "secret-style", "color: red", "enable js", "<h1>"):
        assert gone not in out.content
    assert out.metadata["kind"] == "html"
    assert out.metadata["status"] == 200
    assert server.requests[0].headers["user-agent"].startswith("smith-tui")


def test_html_to_markdown_detects_meta_charset() -> None:
    html = '<html><head><meta charset="latin-1"></head><body><p>caf\xe9</p></body></html>'
    title, text = html_to_markdown(html.encode("latin-1"), "http://h/")
    assert title == ""
    assert text == "café"


async def test_unclosed_head_keeps_body(server: LocalServer) -> None:
    page = b"<html><head><title>Sloppy</title><script>x=1</script><body><p>Body text</p>"
    server.routes["/s"] = lambda _: (200, {"Content-Type": "text/html"}, page)
    out = await handler({"url": f"{server.base}/s"}, make_ctx())
    assert "Title: Sloppy" in out.content
    assert out.content.endswith("Body text")
    assert "x=1" not in out.content


def test_code_identifiers_are_not_escaped() -> None:
    html = b"<p>call my_func(*args)</p><pre><code>def snake_case():\n    pass</code></pre>"
    _, text = html_to_markdown(html, "http://h/")
    assert "my_func(*args)" in text
    assert "```\ndef snake_case():\n    pass\n```" in text


async def test_json_is_pretty_printed(server: LocalServer) -> None:
    payload = {"name": "smith", "tags": ["a", "b"], "nested": {"ok": True}}
    server.routes["/api"] = lambda _: (
        200,
        {"Content-Type": "application/json"},
        json.dumps(payload, separators=(",", ":")).encode(),
    )
    out = await handler({"url": f"{server.base}/api"}, make_ctx())
    assert json.dumps(payload, indent=2) in out.content
    assert out.metadata["kind"] == "json"


async def test_invalid_json_is_shown_as_received(server: LocalServer) -> None:
    server.routes["/bad"] = lambda _: (200, {"Content-Type": "application/json"}, b"{nope")
    out = await handler({"url": f"{server.base}/bad"}, make_ctx())
    assert "(not valid JSON; shown as received)" in out.content
    assert out.content.endswith("{nope")


async def test_plain_text_as_is(server: LocalServer) -> None:
    body = "line one\n  indented *not markdown*\n"
    server.routes["/t"] = lambda _: (200, {"Content-Type": "text/plain"}, body.encode())
    out = await handler({"url": f"{server.base}/t"}, make_ctx())
    assert out.content.endswith(body)


async def test_untyped_html_is_sniffed(server: LocalServer) -> None:
    server.routes["/u"] = lambda _: (
        200,
        {},
        b"<!DOCTYPE html><html><body><h3>Hi</h3></body></html>",
    )
    out = await handler({"url": f"{server.base}/u"}, make_ctx())
    assert "### Hi" in out.content


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 5000),
        ("application/pdf", b"%PDF-1.7\n" + b"x" * 3000),
        ("application/octet-stream", b"\x00\x01\x02" * 1000),
    ],
)
async def test_binary_is_described_not_shown(
    server: LocalServer, content_type: str, body: bytes
) -> None:
    server.routes["/bin"] = lambda _: (200, {"Content-Type": content_type}, body)
    out = await handler({"url": f"{server.base}/bin"}, make_ctx())
    assert f"Binary content ({content_type}, {len(body):,} bytes); not shown" in out.content
    assert "PNG" not in out.content and "%PDF" not in out.content
    assert out.metadata["kind"] == "binary"


async def test_redirects_are_followed(server: LocalServer) -> None:
    server.routes["/old"] = lambda _: (301, {"Location": "/mid"}, b"")
    server.routes["/mid"] = lambda _: (302, {"Location": f"{server.base}/new"}, b"")
    server.routes["/new"] = lambda _: (200, {"Content-Type": "text/plain"}, b"arrived")
    out = await handler({"url": f"{server.base}/old"}, make_ctx())
    assert out.content.endswith("arrived")
    assert f"URL: {server.base}/new" in out.content
    assert out.metadata["redirects"] == [f"{server.base}/mid", f"{server.base}/new"]


async def test_redirect_loop_is_an_error(server: LocalServer) -> None:
    server.routes["/a"] = lambda _: (302, {"Location": "/b"}, b"")
    server.routes["/b"] = lambda _: (302, {"Location": "/a"}, b"")
    with pytest.raises(ToolError) as err:
        await handler({"url": f"{server.base}/a"}, make_ctx())
    assert err.value.code == "redirect_loop"
    assert f"{server.base}/a -> {server.base}/b -> {server.base}/a" in err.value.message


async def test_too_many_redirects(server: LocalServer) -> None:
    for n in range(10):
        server.routes[f"/r{n}"] = lambda _, n=n: (302, {"Location": f"/r{n + 1}"}, b"")
    with pytest.raises(ToolError) as err:
        await handler({"url": f"{server.base}/r0"}, make_ctx())
    assert err.value.code == "too_many_redirects"
    assert "more than 5" in err.value.message
    assert len(server.requests) == 6


async def test_redirect_to_other_scheme_is_refused(server: LocalServer) -> None:
    server.routes["/ftp"] = lambda _: (302, {"Location": "ftp://example.org/file"}, b"")
    with pytest.raises(ToolError, match="uses the 'ftp' scheme"):
        await handler({"url": f"{server.base}/ftp"}, make_ctx())


async def test_too_large_is_truncated_with_note(server: LocalServer) -> None:
    body = b"A" * 50_000 + b"THE-END"
    server.routes["/big"] = lambda _: (200, {"Content-Type": "text/plain"}, body)
    out = await handler({"url": f"{server.base}/big"}, make_ctx(fetch_config(max_bytes=10_000)))
    assert out.metadata["truncated"]
    assert out.metadata["bytes_read"] == 10_000
    assert "download stopped at the 10,000-byte limit (50,007 bytes)" in out.content
    assert "THE-END" not in out.content


async def test_output_is_budgeted(server: LocalServer) -> None:
    body = ("word " * 20_000).encode()
    server.routes["/long"] = lambda _: (200, {"Content-Type": "text/plain"}, body)
    out = await handler(
        {"url": f"{server.base}/long"}, make_ctx(fetch_config(max_output_chars=2000))
    )
    assert len(out.content) < 2200
    assert "cut from the middle" in out.content


async def test_404_is_reported(server: LocalServer) -> None:
    server.routes["/gone"] = lambda _: (
        404,
        {"Content-Type": "text/html"},
        b"<html><body><h1>Page not found</h1></body></html>",
    )
    with pytest.raises(ToolError) as err:
        await handler({"url": f"{server.base}/gone"}, make_ctx())
    assert err.value.code == "http_error"
    assert err.value.data["status"] == 404
    assert f"HTTP 404 Not Found from {server.base}/gone" in err.value.message
    assert "Page not found" in err.value.message


async def test_slow_server_times_out(server: LocalServer) -> None:
    def slow(_: Recorded) -> Reply:
        time.sleep(1.5)
        return 200, {}, b"late"

    server.routes["/slow"] = slow
    with pytest.raises(ToolError) as err:
        await handler({"url": f"{server.base}/slow"}, make_ctx(fetch_config(timeout=0.3)))
    assert err.value.code == "timeout"


async def test_connection_refused(server: LocalServer) -> None:
    base = server.base
    server.stop()
    with pytest.raises(ToolError) as err:
        await handler({"url": f"{base}/x"}, make_ctx())
    assert err.value.code == "network_error"
    # Restart so the fixture's stop() has a live server to stop.
    server.start()


async def test_cancel_returns_quickly(server: LocalServer) -> None:
    def slow(_: Recorded) -> Reply:
        time.sleep(1.0)
        return 200, {}, b"late"

    server.routes["/slow"] = slow
    ctx = make_ctx()
    task = asyncio.create_task(handler({"url": f"{server.base}/slow"}, ctx))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    ctx.cancel.cancel()
    out = await task
    assert time.monotonic() - started < 0.5
    assert out.error == "cancelled"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "uses the 'file' scheme"),
        ("ftp://example.org/x", "uses the 'ftp' scheme"),
        (
            "example.org/page",
            "has no scheme; use a full http(s) URL such as 'https://example.org/page'",
        ),
        ("http://", "has no host name"),
        ("http://exa mple.org/", "contains spaces"),
        ("http://example.org:99999/", "port 99999 is out of range"),
        ("http://[::1/", "malformed URL"),
    ],
)
async def test_bad_urls_are_rejected(url: str, message: str) -> None:
    with pytest.raises(ToolError) as err:
        await handler({"url": url}, make_ctx())
    assert err.value.code == "bad_url"
    assert message in err.value.message


async def test_missing_url_argument() -> None:
    with pytest.raises(ToolError, match="missing required argument `url`"):
        await handler({}, make_ctx())
