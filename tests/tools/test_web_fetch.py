"""The web_fetch tool against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin import web_fetch
from smith_tui.tools.builtin.web_fetch import TOOL, address_problem, html_to_markdown
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import load_error, typed_config

Reply = tuple[int, dict[str, str], bytes]

handler = TOOL.run  # validates like the executor, then runs the handler


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
    host: str = "127.0.0.1"
    tls: ssl.SSLContext | None = None

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

        self._httpd = ThreadingHTTPServer((self.host, 0), Handler)
        if self.tls is not None:
            self._httpd.socket = self.tls.wrap_socket(self._httpd.socket, server_side=True)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    @property
    def base(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def make_ctx(config: dict[str, Any] | None = None) -> ToolContext:
    """A context whose config allows the loopback test server unless ``config`` is given."""
    return ToolContext(
        role="explorer",
        turn_id="turn1",
        cwd=Path("/"),
        cancel=CancelToken.new_root(),
        config=typed_config(fetch_config() if config is None else config),
    )


def fetch_config(**settings: Any) -> dict[str, Any]:
    """``services.tool.web_fetch`` set to ``settings``; ``allow_private`` is true unless given."""
    return {"services": {"tool": {"web_fetch": {"allow_private": True, **settings}}}}


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
    converted = html_to_markdown(html.encode("latin-1"), "http://h/")
    assert converted.title == ""
    assert converted.markdown == "café"


async def test_unclosed_head_keeps_body(server: LocalServer) -> None:
    page = b"<html><head><title>Sloppy</title><script>x=1</script><body><p>Body text</p>"
    server.routes["/s"] = lambda _: (200, {"Content-Type": "text/html"}, page)
    out = await handler({"url": f"{server.base}/s"}, make_ctx())
    assert "Title: Sloppy" in out.content
    assert out.content.endswith("Body text")
    assert "x=1" not in out.content


def test_code_identifiers_are_not_escaped() -> None:
    html = b"<p>call my_func(*args)</p><pre><code>def snake_case():\n    pass</code></pre>"
    text = html_to_markdown(html, "http://h/").markdown
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


# --- HTML conversion: off the event loop, bounded in size and depth ---------------------


async def test_a_page_of_100000_nested_divs_is_flattened(server: LocalServer) -> None:
    # Before the depth cap, markdownify recursed once per level and raised RecursionError
    # from about 330 levels on.
    depth = 100_000
    page = b"<html><body>" + b"<div>" * depth + b"deep text" + b"</div>" * depth
    server.routes["/deep"] = lambda _: (200, {"Content-Type": "text/html"}, page)
    out = await handler({"url": f"{server.base}/deep"}, make_ctx())
    assert out.content.endswith("\n\ndeep text")
    assert "[parts nested more than 128 elements deep are shown as plain text]" in out.content
    # 1.1 MB of tags: the end is beyond the conversion cap.
    assert "[only the first 1,048,576 bytes of the HTML were converted;" in out.content
    assert out.metadata["html_flattened"] is True


@pytest.mark.parametrize(
    ("opening", "closing"),
    [
        ("<div>", "</div>"),
        ("<blockquote>", "</blockquote>"),
        ("<ul><li>", "</li></ul>"),
        ("<table><tr><td>", "</td></tr></table>"),
        ("<b>", "</b>"),
        ("<a href='/x'>", "</a>"),
        ("<pre>", "</pre>"),
        ("<span><em>", "</em></span>"),
    ],
)
def test_any_deep_nesting_converts(opening: str, closing: str) -> None:
    html = opening * 5_000 + "deep text" + closing * 5_000
    converted = html_to_markdown(html, "http://h/")
    assert "deep text" in converted.markdown
    assert converted.flattened


def test_deeply_nested_dropped_elements_go_entirely() -> None:
    html = "<p>kept</p>" + "<svg><g>" * 5_000 + "drawing" + "</g></svg>" * 5_000 + "<p>too</p>"
    converted = html_to_markdown(html, "http://h/")
    assert converted.markdown == "kept\n\ntoo"


def test_nesting_within_the_cap_keeps_its_markup() -> None:
    html = "<div>" * 100 + "<h2>Title</h2><p><a href='/a'>link</a></p>" + "</div>" * 100
    converted = html_to_markdown(html, "http://h/")
    assert converted.markdown == "## Title\n\n[link](http://h/a)"
    assert not converted.flattened
    flat = html_to_markdown(html, "http://h/", max_depth=50)
    assert flat.flattened
    assert flat.markdown == "Title link"


def test_only_the_first_max_bytes_are_converted() -> None:
    html = b"<p>" + b"word " * 1000 + b"</p><p>AFTER-THE-CAP</p>"
    converted = html_to_markdown(html, "http://h/", max_bytes=2000)
    assert converted.cut_at == 2000
    assert "word" in converted.markdown and "AFTER-THE-CAP" not in converted.markdown
    whole = html_to_markdown(html, "http://h/", max_bytes=len(html))
    assert whole.cut_at is None and whole.markdown.endswith("AFTER-THE-CAP")
    # A tag cut in half at the cap is left out rather than shown as text.
    half = html_to_markdown(b"<p>one</p><p>two</p><p>three</p>", "http://h/", max_bytes=22)
    assert half.markdown == "one\n\ntwo"


async def test_a_long_page_is_converted_up_to_the_cap_with_a_note(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_fetch, "MAX_HTML_BYTES", 5_000)
    page = b"<html><body>" + b"<p>para</p>" * 1000 + b"<p>LAST-PARAGRAPH</p></body></html>"
    server.routes["/long"] = lambda _: (200, {"Content-Type": "text/html"}, page)
    out = await handler({"url": f"{server.base}/long"}, make_ctx())
    assert "[only the first 5,000 bytes of the HTML were converted;" in out.content
    assert "para" in out.content and "LAST-PARAGRAPH" not in out.content
    assert out.metadata["html_cut_at"] == 5_000


async def test_html_is_converted_in_a_worker_thread(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[int] = []
    convert = web_fetch.html_to_markdown

    def spy(*args: Any, **kwargs: Any) -> web_fetch.Converted:
        threads.append(threading.get_ident())
        return convert(*args, **kwargs)

    monkeypatch.setattr(web_fetch, "html_to_markdown", spy)
    server.routes["/page"] = lambda _: (200, {"Content-Type": "text/html"}, PAGE)
    server.routes["/gone"] = lambda _: (404, {"Content-Type": "text/html"}, b"<h1>Missing</h1>")
    out = await handler({"url": f"{server.base}/page"}, make_ctx())
    assert "# Version 2.0" in out.content
    with pytest.raises(ToolError, match="Page says: # Missing"):
        await handler({"url": f"{server.base}/gone"}, make_ctx())
    assert len(threads) == 2
    assert threading.get_ident() not in threads


# --- private addresses and the pinned connection ------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "non-public"),
        ("fec0::1", "site-local"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:169.254.1.1", "link-local"),
        ("64:ff9b::7f00:1", "loopback"),
        ("8.8.8.8", None),
        ("93.184.215.14", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),
        ("64:ff9b::808:808", None),
    ],
)
def test_address_classification(address: str, kind: str | None) -> None:
    assert address_problem(address) == kind


async def test_loopback_is_refused_by_default(server: LocalServer) -> None:
    server.routes["/page"] = lambda _: (200, {"Content-Type": "text/plain"}, b"secret")
    with pytest.raises(ToolError) as err:
        await handler({"url": f"{server.base}/page"}, make_ctx({}))
    assert err.value.code == "private_address"
    assert err.value.message == (
        f"refused to fetch {server.base}/page: 127.0.0.1 is a loopback address, and web_fetch "
        "only fetches public internet addresses. To reach local or private servers, set "
        "services.tool.web_fetch.allow_private = true in the config."
    )
    assert err.value.data == {
        "url": f"{server.base}/page",
        "address": "127.0.0.1",
        "kind": "loopback",
    }
    with pytest.raises(ToolError, match=r"localhost resolves to 127\.0\.0\.1, which is a loopback"):
        await handler(
            {"url": f"http://localhost:{server.port}/page"},
            make_ctx(fetch_config(allow_private=False)),
        )
    assert server.requests == []


def test_allow_private_must_be_a_boolean(tmp_path: Path) -> None:
    # Refused when the config is loaded; web_fetch reads the checked, typed value.
    message = load_error(tmp_path, fetch_config(allow_private="yes"))
    assert 'services.tool.web_fetch.allow_private: must be true or false (got "yes")' in message


PRETEND_PUBLIC = "127.0.0.2"
"""A loopback address the tests below let pass as public; the other checks stay real."""


@dataclass
class FakeDns:
    """Answers for made-up host names, in turn; other names go to the real resolver."""

    answers: dict[str, list[list[str]]]
    asked: list[str] = field(default_factory=list)

    async def resolve(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        if host not in self.answers:
            return await REAL_RESOLVE(host, port)
        queue = self.answers[host]
        return queue.pop(0) if len(queue) > 1 else queue[0]


REAL_RESOLVE = web_fetch.resolve
REAL_PROBLEM = web_fetch.address_problem


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    fake = FakeDns({})
    monkeypatch.setattr(web_fetch, "resolve", fake.resolve)
    monkeypatch.setattr(
        web_fetch,
        "address_problem",
        lambda address: None if address == PRETEND_PUBLIC else REAL_PROBLEM(address),
    )
    return fake


@pytest.fixture
def public_server() -> Iterator[LocalServer]:
    local = LocalServer(host=PRETEND_PUBLIC).start()
    try:
        yield local
    finally:
        local.stop()


async def test_the_checked_address_is_the_one_connected_to(
    dns: FakeDns, public_server: LocalServer
) -> None:
    # A second lookup would answer loopback (DNS rebinding); "public.test" exists in no real
    # DNS, so the fetch only works by connecting to the address checked first.
    dns.answers["public.test"] = [[PRETEND_PUBLIC], ["127.0.0.1"]]
    public_server.routes["/page"] = lambda _: (200, {"Content-Type": "text/plain"}, b"hello")
    url = f"http://public.test:{public_server.port}/page"
    out = await handler({"url": url}, make_ctx({}))
    assert out.content == f"URL: {url}\nContent-Type: text/plain\n\nhello"
    assert dns.asked == ["public.test"]
    (request,) = public_server.requests
    assert request.headers["host"] == f"public.test:{public_server.port}"
    assert request.path == "/page"


async def test_a_name_resolving_to_a_private_address_is_refused(
    dns: FakeDns, public_server: LocalServer
) -> None:
    dns.answers["intranet.test"] = [["10.20.30.40"]]
    dns.answers["mixed.test"] = [[PRETEND_PUBLIC, "fd00::5"]]
    for host, address, kind in (
        ("intranet.test", "10.20.30.40", "private"),
        ("mixed.test", "fd00::5", "private"),
    ):
        with pytest.raises(ToolError) as err:
            await handler({"url": f"http://{host}:{public_server.port}/"}, make_ctx({}))
        assert err.value.code == "private_address"
        assert f"{host} resolves to {address}, which is a {kind} address" in err.value.message
    assert public_server.requests == []


async def test_every_redirect_hop_is_checked(
    dns: FakeDns, public_server: LocalServer, server: LocalServer
) -> None:
    dns.answers["public.test"] = [[PRETEND_PUBLIC]]
    server.routes["/secret"] = lambda _: (200, {"Content-Type": "text/plain"}, b"secret")
    targets = {
        "/to-ip": f"{server.base}/secret",
        "/to-localhost": f"http://localhost:{server.port}/secret",
        "/to-mapped": f"http://[::ffff:127.0.0.1]:{server.port}/secret",
    }
    for path, target in targets.items():
        public_server.routes[path] = lambda _, target=target: (302, {"Location": target}, b"")
    start = f"http://public.test:{public_server.port}"
    for path, target in targets.items():
        with pytest.raises(ToolError) as err:
            await handler({"url": start + path}, make_ctx({}))
        assert err.value.code == "private_address"
        assert err.value.message.startswith(
            f"refused to fetch {target} (redirect #1 from {start}{path}): "
        )
        assert "loopback address" in err.value.message
    assert [r.path for r in public_server.requests] == list(targets)
    assert server.requests == []
    # With the setting, the same redirect is followed.
    out = await handler({"url": f"{start}/to-ip"}, make_ctx())
    assert out.content.endswith("secret")


async def test_the_next_checked_address_is_tried_when_one_refuses(
    dns: FakeDns, public_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    unused = "127.0.0.3"  # nothing listens there
    monkeypatch.setattr(
        web_fetch,
        "address_problem",
        lambda address: None if address in (PRETEND_PUBLIC, unused) else REAL_PROBLEM(address),
    )
    dns.answers["two.test"] = [[unused, PRETEND_PUBLIC]]
    public_server.routes["/"] = lambda _: (200, {"Content-Type": "text/plain"}, b"second")
    out = await handler({"url": f"http://two.test:{public_server.port}/"}, make_ctx({}))
    assert out.content.endswith("second")
    dns.answers["none.test"] = [[unused]]
    with pytest.raises(ToolError) as err:
        await handler({"url": f"http://none.test:{public_server.port}/"}, make_ctx({}))
    assert err.value.code == "network_error"


async def test_an_unknown_host_is_a_clear_error() -> None:
    with pytest.raises(ToolError) as err:
        await handler({"url": "http://no-such-host.invalid/"}, make_ctx({}))
    assert err.value.code == "network_error"
    assert "could not resolve the host 'no-such-host.invalid'" in err.value.message


# --- TLS through the pinned address -------------------------------------------------------


@dataclass
class Certificates:
    """A throwaway CA and a server certificate for ``secure.test`` signed by it."""

    ca: Path
    cert: Path
    key: Path


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make test certificates")
    folder = tmp_path_factory.mktemp("tls")

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=folder, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Test CA",
        "-keyout", "ca.key", "-out", "ca.pem")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=secure.test",
        "-keyout", "server.key", "-out", "server.csr")  # fmt: skip
    (folder / "ext.cnf").write_text("subjectAltName=DNS:secure.test\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem")  # fmt: skip
    return Certificates(folder / "ca.pem", folder / "server.pem", folder / "server.key")


@pytest.fixture
def tls_server(
    certificates: Certificates, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LocalServer, list[str | None]]]:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificates.ca))
    names: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificates.cert, certificates.key)
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)  # type: ignore[assignment,func-returns-value]
    local = LocalServer(host=PRETEND_PUBLIC, tls=context).start()
    try:
        yield local, names
    finally:
        local.stop()


async def test_https_sends_the_host_name_and_verifies_it(
    dns: FakeDns, tls_server: tuple[LocalServer, list[str | None]]
) -> None:
    server, names = tls_server
    dns.answers["secure.test"] = [[PRETEND_PUBLIC]]
    server.routes["/"] = lambda _: (200, {"Content-Type": "text/plain"}, b"over tls")
    out = await handler({"url": f"https://secure.test:{server.port}/"}, make_ctx({}))
    assert out.content.endswith("over tls")
    assert names == ["secure.test"]
    assert server.requests[0].headers["host"] == f"secure.test:{server.port}"


async def test_https_refuses_a_certificate_for_another_name(
    dns: FakeDns, tls_server: tuple[LocalServer, list[str | None]]
) -> None:
    # Connecting by address must not weaken the check: the certificate has to match the
    # name in the URL (and it does not name the address either).
    server, names = tls_server
    dns.answers["other.test"] = [[PRETEND_PUBLIC]]
    with pytest.raises(ToolError) as err:
        await handler({"url": f"https://other.test:{server.port}/"}, make_ctx({}))
    assert err.value.code == "network_error"
    assert "certificate" in err.value.message.lower()
    assert names == ["other.test"]
    assert server.requests == []
