"""Tools read the typed configuration the loader validated (``ToolContext.config``).

A setting in the config file reaches the tool through the loader, the runtime, the turn
and the tool context as a typed value; a malformed per-tool setting is refused when the
configuration loads, naming the key, and never at a tool call.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from smith_tui.config import ConfigError, LoadOptions, load_effective_config
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.smith_cli import run_smith, server_args, smith_env
from tests.support.tools import config_file, load_error

TIMEOUT_S = 0.5


def _bash_results(server: ScriptedLLMServer) -> list[str]:
    chats = server.chat_requests()
    return [m["content"] for m in chats[-1]["messages"] if m["role"] == "tool"]


def test_a_default_timeout_in_the_config_file_reaches_bash(tmp_path: Path) -> None:
    # The real binary: config file -> loader -> runtime -> turn -> ToolContext -> bash.
    project = tmp_path / "project"
    project.mkdir()
    config = config_file(
        tmp_path,
        {
            "permissions": {"mode": "yolo"},
            "services": {"tool": {"bash": {"default_timeout_s": TIMEOUT_S}}},
        },
    )
    with ScriptedLLMServer() as server:
        server.enqueue(
            text_reply(tool_calls=[tool_call("bash", {"command": "sleep 30; echo woke"})]),
            text_reply("done"),
        )
        started = time.monotonic()
        done = run_smith(
            ["-p", "wait", *server_args(server.base_url, tmp_path / "smith.db", config)],
            cwd=project,
            env=smith_env(tmp_path),
        )
        elapsed = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-2000:]
        (result,) = _bash_results(server)
    assert f"timed out after {TIMEOUT_S:g} s" in result, result
    assert "woke" not in result
    assert elapsed < 25  # the 30 s sleep was killed at the configured default


def test_without_the_setting_bash_keeps_its_own_default(tmp_path: Path) -> None:
    # Control: the same file without the setting loads bash's documented default.
    loaded = load_effective_config(LoadOptions(config_path=config_file(tmp_path, {})))
    assert loaded.model.services.tool.bash.default_timeout_s == 120.0
    path = config_file(tmp_path, {"services": {"tool": {"bash": {"default_timeout_s": 0.5}}}})
    typed = load_effective_config(LoadOptions(config_path=path)).model
    assert typed.services.tool.bash.default_timeout_s == 0.5


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            {"read": {"max_output_chars": 0}},
            "services.tool.read.max_output_chars: must be greater than 0 (got 0)",
        ),
        (
            {"code_grep": {"max_output_chars": "lots"}},
            'services.tool.code_grep.max_output_chars: must be a whole number (got "lots")',
        ),
        (
            {"edit": {"max_file_bytes": -3}},
            "services.tool.edit.max_file_bytes: must be greater than 0 (got -3)",
        ),
        (
            {"bash": {"max_output_chars": True}},
            "services.tool.bash.max_output_chars: must be a whole number (got true)",
        ),
        ({"note": 5}, "services.tool.note: must be a table (JSON object) (got 5)"),
    ],
)
def test_a_malformed_tool_setting_is_a_load_error_naming_the_key(
    tmp_path: Path, table: dict[str, Any], expected: str
) -> None:
    message = load_error(tmp_path, {"services": {"tool": table}})
    assert message.startswith(f"Invalid configuration in {tmp_path / 'config.json'}:")
    assert expected in message


def test_other_keys_of_a_tool_table_are_kept(tmp_path: Path) -> None:
    # Free-form keys a user may have under a tool's table still load (as before).
    path = config_file(
        tmp_path, {"services": {"tool": {"read": {"max_output_chars": 900, "mine": [1]}}}}
    )
    tool = load_effective_config(LoadOptions(config_path=path)).model.services.tool
    assert tool.max_output_chars("read") == 900
    assert tool.table("read").model_extra == {"mine": [1]}
    assert tool.max_output_chars("code_map") is None  # not mentioned: the tool's own budget


def test_the_binary_reports_a_malformed_tool_setting_before_any_turn(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"services": {"tool": {"read": {"max_output_chars": -1}}}}))
    with ScriptedLLMServer() as server:
        done = run_smith(
            ["-p", "hi", *server_args(server.base_url, tmp_path / "smith.db", config)],
            cwd=tmp_path,
            env=smith_env(tmp_path),
        )
        assert server.chat_requests() == []  # refused before any request
    assert done.returncode != 0
    assert "services.tool.read.max_output_chars: must be greater than 0 (got -1)" in done.stderr
    assert "Traceback" not in done.stderr


def test_check_config_refuses_what_the_loader_refuses() -> None:
    # The typed_config helper of the tool tests validates exactly as the loader does.
    from tests.support.tools import typed_config

    with pytest.raises(ConfigError, match=r"services\.tool\.read\.max_file_bytes"):
        typed_config({"services": {"tool": {"read": {"max_file_bytes": 0}}}})
