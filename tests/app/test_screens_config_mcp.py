"""The config screen's JSON editor for ``mcp_servers``: save into the file, refuse bad input,
keep masked secrets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static, TextArea

from smith_tui.app.screens.config_rows import HIDDEN
from smith_tui.app.screens.config_screen import ConfigScreen
from smith_tui.app.screens.mcp_servers_screen import McpServersScreen
from tests.app.app_harness import (
    SIZE,
    app_runtime,
    isolate_environment,
    make_app,
    screen_text,
    wait_until,
)
from tests.support.screen_host import ScreenHost, offline_runtime

SECRET = "tok-3f9a7c1e55"
SERVERS: dict[str, Any] = {
    "files": {
        "command": "mcp-files",
        "args": ["--root", "."],
        "env": {"FILES_TOKEN": SECRET},
        "enabled": False,
    }
}


def _bytes(runtime) -> bytes:
    return Path(runtime.config.user_config_path).read_bytes()


def _file(runtime) -> dict[str, Any]:
    return json.loads(Path(runtime.config.user_config_path).read_text(encoding="utf-8"))


async def _open_editor(pilot, screen: ConfigScreen, path: str = "mcp_servers") -> McpServersScreen:
    table = screen.query_one("#config-table", DataTable)
    table.move_cursor(row=[row.path for row in screen.rows].index(path))
    table.focus()
    await pilot.pause()
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, McpServersScreen), "the editor")
    return pilot.app.screen


def _editor_json(editor: McpServersScreen) -> dict[str, Any]:
    return json.loads(editor.query_one("#mcp-editor", TextArea).text)


async def _save(pilot, editor: McpServersScreen, data: dict[str, Any] | str) -> None:
    text = data if isinstance(data, str) else json.dumps(data, indent=2)
    editor.query_one("#mcp-editor", TextArea).text = text
    await pilot.press("ctrl+s")
    await pilot.pause()


def _error(editor: McpServersScreen) -> str:
    widget = editor.query_one("#mcp-error", Static)
    return str(widget.render()) if widget.display else ""


async def test_f2_adds_a_server_to_the_file_keeping_other_keys(tmp_path: Path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(
        tmp_path,
        api_url="http://127.0.0.1:9/v1",
        config={"index_file": "NOTES.md", "mcp_servers": SERVERS},
    )
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfigScreen), "f2", within=5)
        config_screen = app.screen
        editor = await _open_editor(pilot, config_screen)
        shown = _editor_json(editor)
        assert shown["files"]["env"] == {"FILES_TOKEN": HIDDEN}
        assert SECRET not in screen_text(app)
        shown["web"] = {"url": "http://127.0.0.1:9/mcp", "timeout_s": 5}
        await _save(pilot, editor, shown)
        await wait_until(pilot, lambda: app.screen is config_screen, "back to the settings")

        saved = _file(runtime)
        assert saved["index_file"] == "NOTES.md"
        assert saved["llm_config"]["api_url"] == "http://127.0.0.1:9/v1"
        assert saved["mcp_servers"]["web"] == {"url": "http://127.0.0.1:9/mcp", "timeout_s": 5}
        assert saved["mcp_servers"]["files"] == SERVERS["files"]  # the secret kept as it was
        assert runtime.config.model.mcp_servers["web"].timeout_s == 5  # config reloaded
        status = str(config_screen.query_one("#config-status", Static).render())
        assert "changed: web" in status and "/mcp restart web" in status
        keys = {str(key.value) for key in config_screen.query_one("#config-table", DataTable).rows}
        assert "mcp_servers.web" in keys
    await runtime.aclose()


async def test_bad_json_and_invalid_field_are_explained_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    runtime = offline_runtime(tmp_path, config={"mcp_servers": SERVERS})
    before = _bytes(runtime)
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        editor = await _open_editor(pilot, app.screen, "mcp_servers.files")
        data = _editor_json(editor)

        await _save(pilot, editor, '{"files": {"command": "x",}')
        assert "Invalid JSON at line 1" in _error(editor)
        assert app.screen is editor

        data["files"]["timeout_s"] = -3
        await _save(pilot, editor, data)
        error = _error(editor)
        assert "mcp_servers.files.timeout_s" in error
        assert app.screen is editor

        await _save(pilot, editor, {"web": {"url": "http://h/mcp", "env": {"A": HIDDEN}}})
        assert "mcp_servers.web" in _error(editor)  # a mask with nothing stored behind it

        assert _bytes(runtime) == before
        assert runtime.config.model.mcp_servers["files"].timeout_s == 30

        await pilot.press("escape")  # cancel: back to the settings, nothing written
        await wait_until(pilot, lambda: isinstance(app.screen, ConfigScreen), "cancelled")
        assert _bytes(runtime) == before
    await runtime.aclose()


async def test_masked_env_value_is_kept_and_a_retyped_one_replaces_it(tmp_path: Path) -> None:
    servers = {"files": {**SERVERS["files"], "env": {"FILES_TOKEN": SECRET, "OTHER": "old-value"}}}
    runtime = offline_runtime(tmp_path, config={"mcp_servers": servers})
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        editor = await _open_editor(pilot, app.screen)
        assert SECRET not in editor.query_one("#mcp-editor", TextArea).text
        data = _editor_json(editor)
        data["files"]["env"]["OTHER"] = "new-value"
        data["files"]["args"] = ["--root", "src"]
        await _save(pilot, editor, data)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfigScreen), "saved")
        files = _file(runtime)["mcp_servers"]["files"]
        assert files["env"] == {"FILES_TOKEN": SECRET, "OTHER": "new-value"}
        assert files["args"] == ["--root", "src"]
    await runtime.aclose()
