"""API keys: never in a child's environment, redacted from tool results and live output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.config import LoadOptions, load_effective_config
from smith_tui.config.secrets import StreamRedactor, redact, secret_values
from smith_tui.tools.builtin import bash, web_search
from smith_tui.tools.builtin.code.rg import rg_env
from smith_tui.tools.executor import execute_tool_call
from smith_tui.tools.process import run_capture
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.safe_git import git_env
from smith_tui.tools.spec import ToolContext, ToolResult
from tests.support.tools import typed_config
from tests.tools.test_web_fetch import LocalServer

KEY = "lk-smith-search-9a8b7c6d5e4f3a2b1c0d"
SEARCH_KEY_ENV = "SMITH_TEST_SEARCH_KEY"
LLM_KEY_ENV = "SMITH_TEST_LLM_KEY"

CONFIG: dict[str, Any] = {
    "llm_config": {"api_key_env": LLM_KEY_ENV},
    "services": {"tool": {"web_search": {"api_key_env": SEARCH_KEY_ENV}}},
}


def make_ctx(
    tmp_path: Path, config: dict[str, Any], outputs: list[str] | None = None
) -> ToolContext:
    return ToolContext(
        role="direct",
        turn_id="t1",
        cwd=tmp_path,
        cancel=CancelToken.new_root(),
        config=typed_config(config),
        on_output=outputs.append if outputs is not None else None,
    )


async def run(name: str, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    registry = ToolRegistry(tools=[bash.TOOL, web_search.TOOL])
    return await execute_tool_call(registry, "call1", name, json.dumps(args), ctx)


@pytest.mark.parametrize("status", [401, 500])
async def test_a_search_error_body_echoing_the_key_is_redacted(
    server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv(SEARCH_KEY_ENV, KEY)
    body = json.dumps({"error": f"invalid key {KEY} for this account"}).encode()
    server.routes["/v1/search"] = lambda _: (status, {"Content-Type": "application/json"}, body)
    config = json.loads(json.dumps(CONFIG))
    config["services"]["tool"]["web_search"]["endpoint"] = f"{server.base}/v1/search"
    result = await run("web_search", {"query": "anything"}, make_ctx(tmp_path, config))
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert not result.ok and f"HTTP {status}" in result.content
    assert "invalid key *** for this account" in result.content
    assert KEY not in result.content and KEY not in (result.error or "")
    assert KEY not in json.dumps(result.metadata)


async def test_configured_key_variables_are_not_in_bash_and_its_output_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_key = "sk-smith-llm-00112233445566778899"
    monkeypatch.setenv(LLM_KEY_ENV, llm_key)
    monkeypatch.setenv(SEARCH_KEY_ENV, KEY)
    (tmp_path / "k").write_text(f"{llm_key} {KEY}\n")
    outputs: list[str] = []
    command = f'echo "[${LLM_KEY_ENV}][${SEARCH_KEY_ENV}]"; cat k'
    result = await run("bash", {"command": command}, make_ctx(tmp_path, CONFIG, outputs))
    assert result.ok
    assert "[][]" in result.content  # not set in the shell at all
    assert "*** ***" in result.content
    live = "".join(outputs)
    assert "[][]" in live and "*** ***" in live
    for text in (result.content, live):
        assert llm_key not in text and KEY not in text


async def test_a_key_split_across_two_writes_never_shows_in_live_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SEARCH_KEY_ENV, KEY)
    half = len(KEY) // 2
    # Two separate writes (likely two reads on our side); a line of stderr comes in between.
    command = (
        f"printf '%s' '{KEY[:half]}'; echo noise >&2; sleep 0.2; printf '%s\\n' '{KEY[half:]}'"
    )
    outputs: list[str] = []
    result = await run("bash", {"command": command}, make_ctx(tmp_path, CONFIG, outputs))
    assert result.ok
    assert "***" in result.content and KEY not in result.content
    live = "".join(outputs)
    assert "***" in live and "noise" in live
    assert KEY not in live and KEY[:half] not in live


def test_stream_redactor_catches_a_value_cut_anywhere() -> None:
    text = f"before {KEY} middle {KEY[:-1]} after {KEY}"
    expected = redact(text, (KEY,))
    assert expected == f"before *** middle {KEY[:-1]} after ***"
    for size in (1, 2, 5, len(KEY) - 1, len(KEY), 100):
        pieces: list[str] = []
        stream = StreamRedactor((KEY,), pieces.append)
        for start in range(0, len(text), size):
            stream.feed(text[start : start + size])
        stream.flush()
        assert "".join(pieces) == expected, size
        assert all(KEY not in piece for piece in pieces)


def test_stream_redactor_passes_ordinary_text_on_at_once() -> None:
    pieces: list[str] = []
    stream = StreamRedactor((KEY,), pieces.append)
    stream.feed("compiling...\n")
    assert pieces == ["compiling...\n"]
    stream.feed("ends with l")  # 'l' could begin the key: held until the next piece
    assert pieces == ["compiling...\n", "ends with "]
    stream.feed("ater")
    assert "".join(pieces) == "compiling...\nends with later"


async def test_every_child_environment_lacks_the_key_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    custom = "SMITH_TEST_OTHER_LLM_KEY"
    monkeypatch.setenv(custom, "sk-smith-custom-abcdefgh")
    monkeypatch.setenv("LLM_API_KEY", "sk-smith-default-abcdefgh")
    monkeypatch.setenv("LINKUP_API_KEY", "lk-smith-default-abcdefgh")
    # A name is remembered once a configuration names it (here: a tool call's config).
    assert secret_values(typed_config({"llm_config": {"api_key_env": custom}}))
    for env in (git_env(), rg_env(), bash._child_env(False), bash._child_env(True)):
        assert not {custom, "LLM_API_KEY", "LINKUP_API_KEY"} & env.keys()
    assert "PATH" in git_env()
    # run_capture without an env (any helper program) starts from the scrubbed one too.
    out = await run_capture(["env"], cwd=tmp_path, cancel=CancelToken.new_root())
    listed = out.stdout.decode()
    assert "PATH=" in listed
    assert custom not in listed and "LLM_API_KEY" not in listed and "LINKUP_API_KEY" not in listed


async def test_short_values_are_hidden_from_bash_but_not_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LLM_KEY_ENV, "abc")
    result = await run(
        "bash", {"command": f'echo "[${LLM_KEY_ENV}] abc"'}, make_ctx(tmp_path, CONFIG)
    )
    assert "[] abc" in result.content


def test_a_key_variable_named_in_the_loaded_config_is_scrubbed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "SMITH_TEST_LOADED_CONFIG_KEY"
    monkeypatch.setenv(name, "sk-smith-loaded-abcdefgh")
    assert name in git_env()
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps({"llm_config": {"api_key_env": name}}))
    loaded = load_effective_config(LoadOptions(config_path=config_file))
    assert loaded.api_key() == "sk-smith-loaded-abcdefgh"
    assert name not in git_env() and name not in rg_env()
