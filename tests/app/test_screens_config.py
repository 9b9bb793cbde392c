"""The config screen against a real runtime: values and sources, validated save, unset, secrets."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static

from smith_tui.app.screens.config_screen import ConfigScreen
from smith_tui.config import DEFAULTS, settings_reference
from tests.app.app_harness import screen_text
from tests.support.screen_host import SIZE, ScreenHost, offline_runtime

OVERRIDES = "runtime_overrides"


def _cells(table: DataTable, path: str) -> list[str]:
    return [str(cell) for cell in table.get_row(path)]


async def _select(pilot, screen: ConfigScreen, path: str) -> None:
    table = screen.query_one("#config-table", DataTable)
    table.move_cursor(row=[row.path for row in screen.rows].index(path))
    table.focus()
    await pilot.pause()


async def _type_value(pilot, screen: ConfigScreen, text: str) -> None:
    box = screen.query_one("#config-value", Input)
    box.focus()
    box.value = ""
    await pilot.press(*text)
    await pilot.press("enter")
    await pilot.pause()


def _error(screen: ConfigScreen) -> str:
    widget = screen.query_one("#config-error", Static)
    return str(widget.render()) if widget.display else ""


async def test_every_setting_shows_with_value_and_source(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path, config={"index_file": "NOTES.md"})
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfigScreen)
        table = screen.query_one("#config-table", DataTable)
        keys = {str(key.value) for key in table.rows}
        for doc in settings_reference():
            assert doc.path in keys, doc.path
        assert _cells(table, "index_file") == ["index_file", "NOTES.md", "user"]
        assert _cells(table, "context_management.tool_output_keep_rounds") == [
            "context_management.tool_output_keep_rounds",
            "7",
            "defaults",
        ]
        assert _cells(table, "default_model")[1:] == ["absent", "defaults"]
        assert _cells(table, "llm_config.retry_backoff_ms")[1:] == ["[10, 20]", "user"]
        text = screen_text(app)
        assert "Settings" in text and "Source" in text
    await runtime.aclose()


async def test_edit_saves_valid_value_and_shows_its_new_source(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        path = "context_management.tool_output_keep_rounds"
        await _select(pilot, screen, path)
        assert screen.query_one("#config-path", Input).value == path
        assert screen.query_one("#config-value", Input).value == "7"
        await pilot.press("enter")  # enter on the row moves into the value box
        assert app.focused is screen.query_one("#config-value", Input)
        await _type_value(pilot, screen, "3")
        assert runtime.config.effective["context_management"]["tool_output_keep_rounds"] == 3
        assert runtime.store.config.get(OVERRIDES) == {
            "context_management": {"tool_output_keep_rounds": 3}
        }
        table = screen.query_one("#config-table", DataTable)
        assert _cells(table, path)[1:] == ["3", "persisted"]
        assert f"Saved {path} = 3" in screen_text(app)
    await runtime.aclose()


async def test_invalid_value_is_explained_inline_and_nothing_is_saved(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        path = "context_management.trim_threshold_pct"
        await _select(pilot, screen, path)
        await _type_value(pilot, screen, "150")
        error = _error(screen)
        assert f"Cannot set {path}" in error
        assert error in screen_text(app).replace("\n", " ") or "Cannot set" in screen_text(app)
        assert runtime.store.config.get(OVERRIDES) is None
        default = DEFAULTS["context_management"]["trim_threshold_pct"]
        assert runtime.config.effective["context_management"]["trim_threshold_pct"] == default
        table = screen.query_one("#config-table", DataTable)
        assert _cells(table, path)[1:] == [f"{default:g}", "defaults"]

        # A read-only setting (not on the override allowlist) is refused the same way.
        await _select(pilot, screen, "services.ui.keys.cancel")
        assert "read-only here" in str(screen.query_one("#config-about", Static).render())
        await _type_value(pilot, screen, "ctrl+x")
        assert "cannot be set at runtime" in _error(screen)
        assert runtime.store.config.get(OVERRIDES) is None

        # An empty value asks for one.
        await _select(pilot, screen, "default_model")
        await _type_value(pilot, screen, "")
        assert "Type a value for default_model" in _error(screen)

        # A good value afterwards clears the error.
        await _type_value(pilot, screen, "my-model")
        assert _error(screen) == ""
        assert runtime.config.effective["default_model"] == "my-model"
    await runtime.aclose()


async def test_unset_returns_to_the_lower_layer(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path, config={"index_file": "NOTES.md"})
    runtime.set_config("index_file", "OTHER.md")
    runtime.set_config("tool_step_budget", "12")
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#config-table", DataTable)
        assert _cells(table, "index_file")[1:] == ["OTHER.md", "persisted"]
        await _select(pilot, screen, "index_file")
        await pilot.press("delete")  # (a letter key once: letters now go to the filter)
        await pilot.pause()
        assert _cells(table, "index_file")[1:] == ["NOTES.md", "user"]
        assert runtime.store.config.get(OVERRIDES) == {"tool_step_budget": 12}

        await _select(pilot, screen, "tool_step_budget")
        await pilot.click("#config-unset")
        await pilot.pause()
        # unset, it shows the value in effect (issue 22), not "absent"
        assert _cells(table, "tool_step_budget")[1:] == ["200", "defaults"]
        assert runtime.store.config.get(OVERRIDES) == {}
        assert "Unset tool_step_budget" in screen_text(app)
    await runtime.aclose()


async def test_models_key_row_adds_a_binding(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        await _select(pilot, screen, "models.<key>")
        await pilot.press("enter")
        path_box = screen.query_one("#config-path", Input)
        assert app.focused is path_box and path_box.value == "models."
        await pilot.press(*"worker", "enter")
        assert app.focused is screen.query_one("#config-value", Input)
        await pilot.press(*"qwen-small", "enter")
        await pilot.pause()
        assert runtime.config.effective["models"]["worker"] == "qwen-small"
        table = screen.query_one("#config-table", DataTable)
        assert _cells(table, "models.worker")[1:] == ["qwen-small", "persisted"]
    await runtime.aclose()


async def test_no_secret_reaches_the_screen(tmp_path: Path, monkeypatch) -> None:
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("LLM_API_KEY", secret)
    runtime = offline_runtime(
        tmp_path,
        config={"llm_config": {"api_url": "http://smith:hunter2pass@127.0.0.1:9/v1"}},
    )
    assert runtime.config.api_key() == secret
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one("#config-table", DataTable)
        seen: list[str] = [screen_text(app)]
        for row in screen.rows:
            screen.show_row(row)
            seen.append(screen.query_one("#config-value", Input).value)
            seen.append(str(screen.query_one("#config-about", Static).render()))
        table.move_cursor(row=len(screen.rows) - 1)
        await pilot.pause()
        seen.append(screen_text(app))  # the lower half of the table, scrolled into view
        seen.extend(
            " ".join(str(cell) for cell in table.get_row_at(i)) for i in range(table.row_count)
        )
        everything = "\n".join(seen)
        assert secret not in everything
        assert "hunter2pass" not in everything
        assert "LLM_API_KEY" in everything  # the variable's name is fine to show
        assert _cells(table, "llm_config.api_url")[1] == "http://smith:••••@127.0.0.1:9/v1"

        # Typing a key path is refused with the reason; nothing is stored.
        screen.query_one("#config-path", Input).value = "llm_config.api_key"
        await _type_value(pilot, screen, "sk-typed")
        assert "secrets are never stored" in _error(screen)
        assert "api_key" not in str(runtime.store.config.get(OVERRIDES))
    await runtime.aclose()


async def test_escape_closes(tmp_path: Path) -> None:
    runtime = offline_runtime(tmp_path)
    app = ScreenHost(lambda: ConfigScreen(runtime))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ConfigScreen)
        assert app.results == [None]
    await runtime.aclose()
