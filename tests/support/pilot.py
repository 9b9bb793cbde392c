"""Driving a Textual app under Pilot: the text on screen, waiting for a condition, and
taking a snapshot that does not depend on the clock."""

from __future__ import annotations

import asyncio
import inspect
import io
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input, TextArea


def screen_text(app: App[Any]) -> str:
    """The plain text of everything on screen (all layers composited)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True)
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


async def wait_until(
    pilot: Pilot[Any], predicate: Callable[[], object], what: str = "", within: float = 30.0
) -> None:
    """Let the app run until ``predicate()`` holds; fail naming ``what`` after ``within`` s.

    Use it instead of a fixed pause whenever the test waits for something it can see.
    The 30 s default is for a loaded machine: the suite must pass while other processes
    keep both cores busy, and there a step that takes 1-4 s idle took over 10 s (a
    starved test process gets a few percent of a core). A wait ends when its condition
    holds, so the bound only decides how long a broken test takes to fail.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


async def wait_for_history_hits(pilot: Pilot[Any], query: str) -> None:
    """Let the history screen's filter (it runs once typing pauses) show the hits for
    ``query``, laid out on screen.

    ``search()`` sets the query, shows the hits list and hides the table in one step, and
    the compositor keeps the table's layout until its next refresh: waiting only for the
    query let a busy machine read the screen before the hits were on it. The status line
    (the count, or "No messages match.") is written in the same step, so its text on
    screen means the hits are too.
    """
    screen: Any = pilot.app.screen
    await wait_until(pilot, lambda: screen.shown_query == query, f"hits for {query!r}")
    status = str(screen.query_one("#history-status").content)
    await wait_until(pilot, lambda: status in screen_text(pilot.app), f"{status!r} on screen")


async def wait_for_still_screen(
    pilot: Pilot[Any], quiet: float = 0.2, within: float = 30.0
) -> None:
    """Let the app run until its screenshot (text and colours) stops changing for ``quiet``
    seconds and several looks in a row: a snapshot taken then does not depend on how busy
    the machine is (a starved event loop can let ``quiet`` pass in one look).

    Text cursors stop blinking first (:func:`stop_cursor_blink`): a blink changes the
    screen twice a second, and on a loaded machine the looks took longer than that, so
    a screen with a focused field never looked still."""
    stop_cursor_blink(pilot.app)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    last = pilot.app.export_screenshot()
    still_since, looks = loop.time(), 0
    while loop.time() - still_since < quiet or looks < 3:
        if loop.time() > deadline:
            raise AssertionError(f"the screen kept changing for {within} s")
        await pilot.pause(0.05)
        shot = pilot.app.export_screenshot()
        if shot != last:
            last, still_since, looks = shot, loop.time(), 0
        else:
            looks += 1


def stop_cursor_blink(app: App[Any]) -> None:
    """Make every text cursor on the screens of ``app`` steady (shown where it has the focus,
    as a blink's "on" phase): a blinking one is caught on or off depending on the clock."""
    for screen in app.screen_stack:
        for widget in screen.query(Input).results():
            widget.cursor_blink = False
        for area in screen.query(TextArea).results():
            area.cursor_blink = False


RunBefore = Callable[[Pilot[Any]], Awaitable[None] | None]


def steady_snapshot(
    compare: Callable[..., bool],
) -> Callable[..., bool]:
    """Wrap pytest-textual-snapshot's ``snap_compare`` so that every snapshot is taken of a
    steady screen: after the test's ``run_before`` and key presses, text cursors stop
    blinking and the screen is left to settle (:func:`wait_for_still_screen`)."""

    def steady_compare(
        app: Any,
        press: Iterable[str] = (),
        terminal_size: tuple[int, int] = (80, 24),
        run_before: RunBefore | None = None,
    ) -> bool:
        keys = list(press)

        async def steady(pilot: Pilot[Any]) -> None:
            if run_before is not None:
                result = run_before(pilot)
                if inspect.isawaitable(result):
                    await result
            if keys:
                await pilot.pause()
                await pilot.press(*keys)
            stop_cursor_blink(pilot.app)
            await wait_for_still_screen(pilot)

        return compare(app, terminal_size=terminal_size, run_before=steady)

    return steady_compare
