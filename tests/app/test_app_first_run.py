"""The welcome screen through the real app (issue 17, first run).

The local-server probe asks the scripted server (on its loopback port, named like
llama.cpp) instead of the usual ports, so the tests do not depend on what else runs on
this machine.
"""

from __future__ import annotations

import json

import pytest

from smith_tui.app.first_run import FirstRunScreen
from smith_tui.llm import server_probe
from smith_tui.llm.server_probe import probe_local_servers
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    running,
    screen_text,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer


def _port(server: ScriptedLLMServer) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A runtime with no server configured, and the path of its (absent) config file.

    The probe may wait 30 s for an answer, not 0.6: the scripted server is a thread of
    this process, which on a loaded machine answers later than a real local server (a
    closed port is refused at once either way)."""
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setattr(server_probe, "PROBE_TIMEOUT_S", 30.0)
    runtime = app_runtime(tmp_path)
    yield runtime, tmp_path / "config.json"
    runtime.store.close()


async def test_probe_finds_a_loopback_server_and_skips_closed_ports(llm_server) -> None:
    port = _port(llm_server)
    found = await probe_local_servers((("llama.cpp", port), ("vLLM", 9)), timeout_s=30.0)
    assert [(s.name, s.url) for s in found] == [("llama.cpp", f"http://127.0.0.1:{port}/v1")]
    assert found[0].describe().startswith(f"llama.cpp at http://127.0.0.1:{port}/v1 (")


async def test_a_found_server_is_offered_and_enter_saves_it(fresh, monkeypatch, llm_server):
    runtime, config_path = fresh
    port = _port(llm_server)
    monkeypatch.setattr(server_probe, "LOCAL_SERVERS", (("llama.cpp", port),))
    app = make_app(runtime)
    async with running(app) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, FirstRunScreen), "welcome")
        screen = app.screen
        text = await wait_for_text(pilot, f"llama.cpp at http://127.0.0.1:{port}/v1")
        assert str(config_path) in text and "llm_config.api_url" in text
        url_box = screen.query_one("#first-run-url")
        assert url_box.has_focus and url_box.value == f"http://127.0.0.1:{port}/v1"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is app.main_screen, "the main screen")
    saved = json.loads(config_path.read_text())
    assert saved == {"llm_config": {"api_url": f"http://127.0.0.1:{port}/v1"}}
    assert runtime.server_configured


async def test_a_typed_url_is_checked_then_saved_keeping_other_settings(fresh, monkeypatch):
    runtime, config_path = fresh
    config_path.write_text(json.dumps({"default_model": "kept-model"}), encoding="utf-8")
    runtime.reload_config()
    monkeypatch.setattr(server_probe, "LOCAL_SERVERS", ())
    app = make_app(runtime)
    async with running(app) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, FirstRunScreen), "welcome")
        await wait_for_text(pilot, "No server answered")
        await pilot.press(*"localhost:8080", "enter")
        await wait_for_text(pilot, "is not an http:// or https:// URL")
        assert "api_url" not in config_path.read_text()
        await pilot.press("ctrl+a", "ctrl+k", *"http://gpu-box:8000/v1", "enter")
        await wait_until(pilot, lambda: app.screen is app.main_screen, "the main screen")
    saved = json.loads(config_path.read_text())
    assert saved == {
        "default_model": "kept-model",
        "llm_config": {"api_url": "http://gpu-box:8000/v1"},
    }


async def test_down_chooses_among_found_servers(fresh, monkeypatch) -> None:
    runtime, config_path = fresh
    with ScriptedLLMServer() as first, ScriptedLLMServer() as second:
        ports = _port(first), _port(second)
        monkeypatch.setattr(
            server_probe, "LOCAL_SERVERS", (("Ollama", ports[0]), ("vLLM", ports[1]))
        )
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, FirstRunScreen), "welcome")
            await wait_until(pilot, lambda: len(app.screen.found) == 2, "both servers")
            # One key at a time, each once the one before is answered (a busy machine
            # answers after press returns): an enter still in the URL field saves the first.
            found = app.screen.query_one("#first-run-found")
            await pilot.press("down")
            await wait_until(pilot, lambda: found.has_focus and found.highlighted == 0, "list")
            await pilot.press("down")
            await wait_until(pilot, lambda: found.highlighted == 1, "the second server")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.screen is app.main_screen, "the main screen")
    saved = json.loads(config_path.read_text())
    assert saved["llm_config"]["api_url"] == f"http://127.0.0.1:{ports[1]}/v1"


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
def test_welcome_screen_snapshot(snap_compare, tmp_path, monkeypatch, size) -> None:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(server_probe, "LOCAL_SERVERS", ())
    runtime = app_runtime(tmp_path)
    object.__setattr__(runtime.config, "user_config_path", "~/.config/smith/config.json")
    app = make_app(runtime)

    async def shown(pilot) -> None:
        # (snap_compare then stops the URL box's cursor blinking: tests/conftest.py)
        await wait_until(pilot, lambda: "No server answered" in screen_text(app), "the probe")

    try:
        assert snap_compare(app, terminal_size=size, run_before=shown)
    finally:
        runtime.store.close()


async def test_f2_puts_connection_settings_first_and_filters(fresh, monkeypatch) -> None:
    from textual.widgets import DataTable, Input

    from smith_tui.app.screens.config_screen import ConfigScreen

    runtime, _ = fresh
    monkeypatch.setattr(server_probe, "LOCAL_SERVERS", ())
    app = make_app(runtime)
    async with running(app) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, FirstRunScreen), "welcome")
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfigScreen), "settings")
        screen = app.screen
        table = screen.query_one("#config-table", DataTable)
        # Text typed before the screen has focused its table reaches no field: wait for it.
        await wait_until(pilot, lambda: table.has_focus, "the table's focus")
        paths = [row.path for row in screen.rows]
        assert paths[0] == "llm_config.api_url"
        first_other = next(i for i, p in enumerate(paths) if not p.startswith("llm_config."))
        assert paths[first_other] == "default_model"
        assert all(not p.startswith("llm_config.") for p in paths[first_other:])
        box = screen.query_one("#config-filter", Input)
        await pilot.press("slash")
        await wait_until(pilot, lambda: box.has_focus, "the filter's focus")
        await pilot.press(*"timeout")
        # (the rows follow the box one change later: wait for the last one)
        await wait_until(pilot, lambda: box.value == "timeout", "the typed filter")
        await wait_until(pilot, lambda: len(screen.rows) < len(paths), "the filter")
        await wait_until(
            pilot,
            lambda: all("timeout" in f"{r.path} {r.description}" for r in screen.rows),
            "the rows of the whole word",
        )
        assert screen.rows and all("timeout" in f"{r.path} {r.description}" for r in screen.rows)
        assert table.row_count == len(screen.rows)
        await pilot.press("enter")
        await wait_until(pilot, lambda: table.has_focus, "the table's focus")
        # "/" typed into the value box is text, not the filter key.
        value = screen.query_one("#config-value", Input)
        value.focus()
        await wait_until(pilot, lambda: value.has_focus, "the value box's focus")
        await pilot.press(*"a/b")
        await wait_until(pilot, lambda: value.value.endswith("a/b"), "the typed text")


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
def test_config_screen_filtered_snapshot(snap_compare, tmp_path, size) -> None:
    import asyncio

    from smith_tui.app.screens.config_screen import ConfigScreen
    from tests.support.screen_host import ScreenHost, offline_runtime

    runtime = offline_runtime(tmp_path)
    app = ScreenHost(lambda: ConfigScreen(runtime))

    async def filtered(pilot) -> None:
        await pilot.pause()
        total = len(app.screen.rows)
        await pilot.press("slash", *"url")
        await wait_until(pilot, lambda: 0 < len(app.screen.rows) < total, "the filtered rows")
        assert app.screen.rows[0].path == "llm_config.api_url"

    try:
        assert snap_compare(app, terminal_size=size, run_before=filtered)
    finally:
        asyncio.run(runtime.aclose())
