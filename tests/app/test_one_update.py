"""``one_update`` holds the screen for one update, never for good."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from smith_tui.widgets.textual_compat import updates_held
from smith_tui.widgets.transcript.parking import one_update
from tests.support.pilot import wait_until


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("before", id="line")


def drawn_texts(line: Static) -> list[str]:
    """What ``line`` held each time the screen drew it (from now on)."""
    drawn: list[str] = []
    render_lines = line.render_lines

    def recording(crop: Any) -> Any:
        drawn.append(str(line.render()))
        return render_lines(crop)

    line.render_lines = recording  # type: ignore[method-assign]
    return drawn


async def test_work_that_never_finishes_does_not_freeze_the_screen() -> None:
    app = Host()
    async with app.run_test(size=(40, 5)) as pilot:
        line = app.query_one("#line", Static)
        await pilot.pause()
        drawn = drawn_texts(line)
        entered = asyncio.Event()

        async def stuck() -> None:
            with one_update(line, limit_s=0.2):
                entered.set()
                await asyncio.Event().wait()  # a mount or render that never comes

        task = asyncio.create_task(stuck())
        await entered.wait()
        assert updates_held(app)
        line.update("after")
        await wait_until(pilot, lambda: "after" in drawn, "drawn while the work waits", 10)
        assert not updates_held(app) and not task.done()
        task.cancel()  # leaving it later releases nothing twice
        await asyncio.gather(task, return_exceptions=True)
        assert not updates_held(app)
        with one_update(line):
            assert updates_held(app)
        assert not updates_held(app)


async def test_an_update_that_finishes_holds_the_screen_until_it_ends() -> None:
    app = Host()
    async with app.run_test(size=(40, 5)) as pilot:
        line = app.query_one("#line", Static)
        await pilot.pause()
        drawn = drawn_texts(line)
        with one_update(line, limit_s=30):
            line.update("after")
            for _ in range(5):
                await pilot.pause()
            assert "after" not in drawn  # held: not drawn yet
        await wait_until(pilot, lambda: "after" in drawn, "drawn once released")
