"""The panes receive engine events through a declared protocol (EventSink), checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widget import Widget
from textual.widgets import Static

from smith_tui.app import main_screen
from smith_tui.app.app import SmithApp
from smith_tui.app.main_screen import SINK_IDS, ConversationView, EventSink
from smith_tui.engine import events as ev
from tests.app.app_harness import app_runtime, isolate_environment, make_app, running

OFFLINE_URL = "http://127.0.0.1:9/v1"


async def test_every_sink_implements_the_protocol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url=OFFLINE_URL)
    app = make_app(runtime)
    async with running(app) as pilot:
        screen = app.main_screen
        sinks = screen.sinks
        assert [w.id for w in sinks] == list(SINK_IDS)  # type: ignore[attr-defined]
        assert all(isinstance(w, EventSink) for w in sinks)
        assert isinstance(app.query_one("#transcript"), ConversationView)
        screen.apply_events(
            [ev.ToolCallStarted(turn_id="t", call_id="c", name="bash", arguments="{}")]
        )
        await pilot.pause()
        assert app.query_one("#status").status == "tool"  # type: ignore[attr-defined]
    assert not isinstance(Static(), EventSink)


async def test_a_pane_without_handle_event_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path, api_url=OFFLINE_URL)

    def panes(refresh_s: float) -> dict[str, Widget]:
        made = real_make_panes(refresh_s)
        made["tools"] = Static(id="tools")
        return made

    real_make_panes = main_screen.make_panes
    monkeypatch.setattr(main_screen, "make_panes", panes)
    app = SmithApp(runtime, animations=False)
    with pytest.raises(TypeError, match=r"#tools \(Static\) does not implement EventSink"):
        async with running(app):
            pass
