"""Engine events on screen: the bridge, the status line, the Matrix rain and the first run."""

from __future__ import annotations

import asyncio
import threading

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from smith_tui.app.bridge import EngineEventsArrived, EventBridge, coalesce
from smith_tui.app.first_run import FirstRunScreen
from smith_tui.engine import events as ev
from smith_tui.widgets.matrix_rain import GLYPHS, MatrixRain, use_kitty_graphics
from smith_tui.widgets.status_line import StatusLine
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    screen_text,
    wait_for_text,
    wait_until,
)


def test_coalesce_merges_adjacent_deltas_of_one_stream_only() -> None:
    a = [ev.TextDelta(turn_id="t", text=c) for c in "abc"]
    child = ev.TextDelta(turn_id="t", text="X", role="worker", job_id="j1")
    reasoning = ev.ReasoningDelta(turn_id="t", text="r")
    out = coalesce([*a, child, a[0], reasoning, reasoning, ev.StatusChanged(status="tool")])
    assert [type(e).__name__ for e in out] == [
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "ReasoningDelta",
        "StatusChanged",
    ]
    assert out[0].text == "abc" and out[1].text == "X" and out[2].text == "a"
    assert out[3].text == "rr"


class BridgeHost(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[ev.Event]] = []
        self.bridge = EventBridge(self)
        self.subscribers: list = []

    def compose(self) -> ComposeResult:
        yield Static("host")

    def subscribe(self, callback):
        self.subscribers.append(callback)
        return lambda: self.subscribers.remove(callback)

    def on_mount(self) -> None:
        self.bridge.attach(self.subscribe)

    def on_engine_events_arrived(self, message: EngineEventsArrived) -> None:
        self.batches.append(message.events)


async def test_bridge_batches_deltas_from_another_thread_into_few_messages() -> None:
    app = BridgeHost()
    async with app.run_test() as pilot:
        callback = app.subscribers[0]

        def produce() -> None:
            for i in range(500):
                callback(ev.TextDelta(turn_id="t", text=f"{i},"))
            callback(ev.TurnFinished(turn_id="t", conversation_id="c", stop_reason="completed"))

        thread = threading.Thread(target=produce)
        thread.start()
        thread.join()
        await wait_until(
            pilot, lambda: app.batches and isinstance(app.batches[-1][-1], ev.TurnFinished)
        )
        events = [e for batch in app.batches for e in batch]
        text = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
        assert text == "".join(f"{i}," for i in range(500))
        assert len(app.batches) <= 3
        assert app.bridge.delivered_batches == len(app.batches)


async def test_bridge_delivers_in_order_on_the_loop_thread() -> None:
    app = BridgeHost()
    async with app.run_test() as pilot:
        callback = app.subscribers[0]
        for status in ("thinking", "streaming", "idle"):
            callback(ev.StatusChanged(status=status))
            await asyncio.sleep(0.05)
        await wait_until(pilot, lambda: sum(len(b) for b in app.batches) == 3)
        flat = [e.status for b in app.batches for e in b]
        assert flat == ["thinking", "streaming", "idle"]
        app.bridge.detach()
        assert app.subscribers == []


async def test_status_line_follows_status_role_model_and_title(runtime) -> None:
    runtime.store.conversations.rename(runtime.conversations.conversation_id, "Red pill")
    runtime.conversations.reload()
    app = make_app(runtime)
    async with running(app) as pilot:
        status = app.screen.query_one(StatusLine)
        await wait_for_text(pilot, "Red pill")
        runtime.emit(ev.LLMRequestStarted(turn_id="t", model="qwen-72b", role="orchestrator"))
        runtime.emit(ev.StatusChanged(status="tool", detail="bash", role="orchestrator"))
        await wait_until(pilot, lambda: status.status == "tool")
        text = await wait_for_text(pilot, "tool: bash")
        line = next(line for line in text.splitlines() if "tool: bash" in line)
        assert "Tank" in line and "qwen-72b" in line and "Red pill" in line
        assert line.split()[0] in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"  # spinner while busy
        runtime.emit(
            ev.TurnFinished(
                turn_id="t",
                conversation_id="c",
                stop_reason="error",
                error={"message": "server went away"},
            )
        )
        text = await wait_for_text(pilot, "error: server went away")
        assert "✗ error" in text
        runtime.emit(ev.StatusChanged(status="cancelled", job_id="j1", role="worker"))
        await pilot.pause(0.1)
        assert status.status == "error"  # sub-agent statuses stay in the dispatch tree


async def test_child_retry_names_the_sub_agent(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        runtime.emit(
            ev.RetryScheduled(
                turn_id="t", attempt=1, delay_s=4.2, reason="HTTP 429", role="explorer", job_id="j"
            )
        )
        await wait_for_text(pilot, "Link: retrying in 5s (HTTP 429)")
        runtime.emit(ev.TextDelta(turn_id="t", text="x", role="explorer", job_id="j"))
        status = app.screen.query_one(StatusLine)
        await wait_until(pilot, lambda: status.retry == "")


async def test_matrix_rain_while_a_sub_agent_waits_and_never_for_smith(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        rain = app.screen.query_one(MatrixRain)
        runtime.emit(ev.LLMRequestStarted(turn_id="t", model="m", role="direct"))
        await pilot.pause(0.1)
        assert not rain.display
        runtime.emit(ev.LLMRequestStarted(turn_id="t", model="m", role="worker", job_id="j1"))
        await wait_until(pilot, lambda: rain.display, what="rain")
        assert rain.tint == "#FF4FD8"
        transcript = app.screen.query_one("#transcript")
        # Shown is not yet laid out: the region comes with the next layout, the glyph
        # columns with the resize after it (on a busy machine, after some pauses).
        await wait_until(pilot, lambda: rain.region.width > 0, what="the rain's layout")
        assert rain.region.width == pytest.approx(transcript.region.width * 0.4, abs=2)
        assert not rain.region.overlaps(transcript.region)  # beside the text, never over it
        region = rain.region

        def strip() -> list[str]:
            lines = screen_text(app).splitlines()[region.y : region.bottom]
            return [line[region.x : region.right] for line in lines]

        def glyphs() -> list[str]:
            return [ch for line in strip() for ch in line if ch != " "]

        await wait_until(pilot, lambda: len(glyphs()) > region.area // 8, what="the glyphs")
        assert set(glyphs()) <= set(GLYPHS), "\n".join(strip())
        runtime.emit(ev.LLMRequestStarted(turn_id="t", model="m", role="explorer", job_id="j2"))
        await wait_until(pilot, lambda: rain.tint == "#00E5FF", what="Link's tint")
        runtime.emit(ev.ReasoningDelta(turn_id="t", text="hm", role="explorer", job_id="j2"))
        await wait_until(pilot, lambda: rain.tint == "#FF4FD8", what="back to Niobe")
        await pilot.press("f1")  # a modal screen on top pauses the rain
        await wait_until(pilot, lambda: rain.suspended, what="the rain to pause")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not rain.suspended, what="the rain to go on")
        runtime.emit(ev.TextDelta(turn_id="t", text="ok", role="worker", job_id="j1"))
        await wait_until(pilot, lambda: not rain.display, what="rain to stop")


async def test_matrix_rain_animates_at_ten_fps_when_animations_are_on() -> None:
    class RainHost(App[None]):
        def compose(self) -> ComposeResult:
            yield MatrixRain(id="rain")

    app = RainHost()
    async with app.run_test(size=(60, 12)) as pilot:
        app.animation_level = "full"
        rain = app.query_one(MatrixRain)
        rain.handle_event(ev.LLMRequestStarted(turn_id="t", model="m", role="orchestrator"))
        await wait_until(pilot, lambda: rain.size.width > 0)

        def frame() -> list[str]:
            return [line.text for line in (rain.render_line(y) for y in range(rain.size.height))]

        before = frame()
        await wait_until(pilot, lambda: frame() != before, "the rain to move")
        rain.handle_event(
            ev.TurnFinished(turn_id="t", conversation_id="c", stop_reason="completed")
        )
        assert not rain.raining


def test_kitty_graphics_detection_follows_the_setting_then_the_terminal() -> None:
    assert use_kitty_graphics({"TERM": "xterm-kitty"})
    assert use_kitty_graphics({"KITTY_WINDOW_ID": "3", "TERM": "xterm-256color"})
    assert not use_kitty_graphics({"TERM": "xterm-kitty", "TMUX": "/tmp/tmux-0/default"})
    assert not use_kitty_graphics({"TERM": "xterm-256color"})
    assert not use_kitty_graphics({"TERM": "xterm-kitty"}, "off")
    assert use_kitty_graphics({"TERM": "xterm-256color"}, "on")


class GraphicsRainHost(App[None]):
    CSS = "Screen { layout: vertical; } #above { height: 3; }"

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("above", id="above")
        yield MatrixRain(id="rain", graphics=True, write=self.writes.append)


async def test_kitty_rain_places_frames_behind_the_blank_strip_and_deletes_them() -> None:
    app = GraphicsRainHost()
    async with app.run_test(size=(50, 20)) as pilot:
        rain = app.query_one(MatrixRain)
        rain.handle_event(ev.LLMRequestStarted(turn_id="t", model="m", role="worker", job_id="j"))
        await wait_until(pilot, lambda: len(app.writes) >= 2, what="two frames")
        region = rain.region
        frame = app.writes[0]
        assert frame.startswith("\x1b7") and frame.endswith("\x1b8")  # cursor saved, restored
        assert f"\x1b[{region.y + 1};{region.x + 1}H" in frame  # placed on the strip's cell
        assert "a=T" in frame and "z=-10" in frame and f"r={region.height}" in frame
        lines = screen_text(app).splitlines()[region.y : region.bottom]
        assert all(not line[region.x : region.right].strip() for line in lines)  # no glyphs
        app.query_one("#above").styles.height = 5  # the strip moves down: so do the frames
        await wait_until(
            pilot, lambda: f"\x1b[{region.y + 3};" in app.writes[-1], what="the moved strip"
        )
        rain.suspended = True  # a modal covers the screen: the image goes
        assert "a=d" in app.writes[-1]
        count = len(app.writes)
        await pilot.pause(0.3)
        assert len(app.writes) == count
        rain.suspended = False
        await wait_until(pilot, lambda: len(app.writes) > count + 1, what="frames again")
        rain.handle_event(ev.TextDelta(turn_id="t", text="x", role="worker", job_id="j"))
        assert "a=d" in app.writes[-1]
        assert not rain.display


async def test_first_run_explains_the_server_setting_and_quits(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("smith_tui.llm.server_probe.LOCAL_SERVERS", ())  # ask no real port
    with isolated_runtime(tmp_path, monkeypatch) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, FirstRunScreen))
            text = await wait_for_text(pilot, "llm_config.api_url")
            assert "http://127.0.0.1:8080/v1" in text
            assert "LLM_API_KEY" in text
            assert str(tmp_path / "config.json") in text
            await pilot.press("f2")
            from smith_tui.app.screens.config_screen import ConfigScreen

            await wait_until(pilot, lambda: isinstance(app.screen, ConfigScreen), what="config")
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, FirstRunScreen), what="back")
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: not app.is_running, what="q to quit")
        assert app.return_code == 0


async def test_first_run_gives_way_once_the_config_screen_sets_a_server(
    tmp_path, monkeypatch, llm_server
) -> None:
    monkeypatch.setattr("smith_tui.llm.server_probe.LOCAL_SERVERS", ())  # ask no real port
    with isolated_runtime(tmp_path, monkeypatch) as runtime:
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, FirstRunScreen))
            await pilot.click("#configure")
            from smith_tui.app.screens.config_screen import ConfigScreen

            await wait_until(pilot, lambda: isinstance(app.screen, ConfigScreen), what="config")
            runtime.set_config("llm_config.api_url", llm_server.base_url)
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is app.main_screen, what="the main screen")


async def test_first_run_is_skipped_when_a_server_is_configured(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.pause()
        assert app.screen is app.main_screen
