"""The web_search tool against a local stand-in for the Linkup API."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin.web_search import TOOL
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import load_error, typed_config
from tests.tools.test_web_fetch import LocalServer, Recorded, Reply

KEY_ENV = "SMITH_TEST_LINKUP_KEY"

RESULTS = {
    "results": [
        {
            "type": "text",
            "name": "Textual documentation",
            "url": "https://textual.textualize.io/",
            "content": "Textual is a  Rapid Application Development\nframework for Python.",
        },
        {"type": "text", "name": "No snippet here", "url": "https://example.org/b"},
    ]
}

handler = TOOL.run  # validates like the executor, then runs the handler


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    return "sk-test-123"


def make_ctx(server: LocalServer | None, **settings: Any) -> ToolContext:
    config = {"api_key_env": KEY_ENV, **settings}
    if server is not None:
        config.setdefault("endpoint", f"{server.base}/v1/search")
    return ToolContext(
        role="direct",
        turn_id="turn1",
        cwd=Path("/"),
        cancel=CancelToken.new_root(),
        config=typed_config({"services": {"tool": {"web_search": config}}}),
    )


def json_reply(payload: Any, status: int = 200) -> Reply:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def test_spec_shape() -> None:
    assert TOOL.name == "web_search"
    assert TOOL.input_schema["required"] == ["query"]


async def test_request_and_formatting(server: LocalServer, api_key: str) -> None:
    server.routes["/v1/search"] = lambda _: json_reply(RESULTS)
    out = await handler({"query": "  textual tui framework "}, make_ctx(server, max_results=3))
    request = server.requests[0]
    assert request.method == "POST"
    assert request.headers["authorization"] == f"Bearer {api_key}"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.body) == {
        "q": "textual tui framework",
        "depth": "standard",
        "outputType": "searchResults",
        "maxResults": 3,
    }
    assert out.content == (
        "Search results for 'textual tui framework' (2):\n\n"
        "1. Textual documentation\n"
        "   https://textual.textualize.io/\n"
        "   Textual is a Rapid Application Development framework for Python.\n\n"
        "2. No snippet here\n"
        "   https://example.org/b"
    )
    assert out.metadata["results"] == 2


async def test_depth_and_output_type_from_config(server: LocalServer, api_key: str) -> None:
    server.routes["/v1/search"] = lambda _: json_reply(
        {"answer": "It is 42.", "sources": [{"name": "Src", "url": "https://s", "snippet": "s1"}]}
    )
    out = await handler(
        {"query": "meaning"}, make_ctx(server, depth="deep", output_type="sourcedAnswer")
    )
    body = json.loads(server.requests[0].body)
    assert body["depth"] == "deep"
    assert body["outputType"] == "sourcedAnswer"
    assert "maxResults" not in body
    assert "Answer:\nIt is 42." in out.content
    assert "1. Src\n   https://s\n   s1" in out.content


async def test_no_results(server: LocalServer, api_key: str) -> None:
    server.routes["/v1/search"] = lambda _: json_reply({"results": []})
    out = await handler({"query": "zzqx"}, make_ctx(server))
    assert out.content == "No results for 'zzqx'. Try different or broader terms."


async def test_structured_output_is_shown_as_json(server: LocalServer, api_key: str) -> None:
    server.routes["/v1/search"] = lambda _: json_reply({"company": "ACME", "founded": 1947})
    out = await handler({"query": "acme"}, make_ctx(server))
    assert json.loads(out.content) == {"company": "ACME", "founded": 1947}


async def test_long_snippets_and_output_are_budgeted(server: LocalServer, api_key: str) -> None:
    many = {
        "results": [
            {"name": f"r{n}", "url": f"https://e/{n}", "content": "word " * 400} for n in range(50)
        ]
    }
    server.routes["/v1/search"] = lambda _: json_reply(many)
    out = await handler({"query": "q"}, make_ctx(server, max_output_chars=3000))
    assert len(out.content) < 3200
    assert "cut from the middle" in out.content
    assert "…" in out.content


async def test_missing_key_is_a_clear_error(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ToolError) as err:
        await handler({"query": "x"}, make_ctx(server))
    assert err.value.code == "not_configured"
    assert KEY_ENV in err.value.message
    assert server.requests == []


async def test_default_key_variable_is_linkup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LINKUP_API_KEY", raising=False)
    ctx = ToolContext(role="direct", turn_id="t", cwd=Path("/"), cancel=CancelToken.new_root())
    with pytest.raises(ToolError, match="LINKUP_API_KEY"):
        await handler({"query": "x"}, ctx)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "rejected the API key (HTTP 401"),
        (429, "rate limiting (HTTP 429"),
        (500, "answered HTTP 500: boom"),
    ],
)
async def test_http_errors(server: LocalServer, api_key: str, status: int, expected: str) -> None:
    server.routes["/v1/search"] = lambda _: (status, {"Content-Type": "text/plain"}, b"boom")
    with pytest.raises(ToolError) as err:
        await handler({"query": "x"}, make_ctx(server))
    assert err.value.code == "http_error"
    assert expected in err.value.message
    assert err.value.data == {"status": status}


async def test_bad_json(server: LocalServer, api_key: str) -> None:
    server.routes["/v1/search"] = lambda _: (200, {"Content-Type": "application/json"}, b"<html>")
    with pytest.raises(ToolError) as err:
        await handler({"query": "x"}, make_ctx(server))
    assert err.value.code == "bad_response"
    assert "not JSON" in err.value.message
    assert "'<html>'" in err.value.message


async def test_unexpected_json_shape(server: LocalServer, api_key: str) -> None:
    server.routes["/v1/search"] = lambda _: json_reply(["a", "b"])
    with pytest.raises(ToolError, match="unexpected shape"):
        await handler({"query": "x"}, make_ctx(server))


async def test_timeout(server: LocalServer, api_key: str) -> None:
    def slow(_: Recorded) -> Reply:
        time.sleep(1.0)
        return json_reply(RESULTS)

    server.routes["/v1/search"] = slow
    with pytest.raises(ToolError) as err:
        await handler({"query": "x"}, make_ctx(server, timeout=0.2))
    assert err.value.code == "timeout"


async def test_unreachable_endpoint(api_key: str) -> None:
    local = LocalServer().start()
    endpoint = f"{local.base}/v1/search"
    local.stop()
    with pytest.raises(ToolError) as err:
        await handler({"query": "x"}, make_ctx(None, endpoint=endpoint))
    assert err.value.code == "network_error"
    assert endpoint in err.value.message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `query`"),
        ({"query": "  "}, "`query` must not be empty"),
        ({"query": 5}, "`query` must be a string"),
    ],
)
async def test_bad_arguments(
    server: LocalServer, api_key: str, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx(server))
    assert message in err.value.message
    assert server.requests == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_results": "many"}, "services.tool.web_search.max_results"),
        ({"depth": ""}, "services.tool.web_search.depth"),
        ({"timeout": -1}, "services.tool.web_search.timeout"),
    ],
)
def test_bad_settings_are_refused_when_the_config_loads(
    tmp_path: Path, settings: dict[str, Any], message: str
) -> None:
    # Checked once by the loader; web_search reads the typed, checked options.
    assert message in load_error(tmp_path, {"services": {"tool": {"web_search": settings}}})


async def test_cancel_returns_quickly(server: LocalServer, api_key: str) -> None:
    def slow(_: Recorded) -> Reply:
        time.sleep(1.0)
        return json_reply(RESULTS)

    server.routes["/v1/search"] = slow
    ctx = make_ctx(server)
    task = asyncio.create_task(handler({"query": "x"}, ctx))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    ctx.cancel.cancel()
    out = await task
    assert time.monotonic() - started < 0.5
    assert out.error == "cancelled"
    assert not out.ok
