"""A snapshot of the four widgets side by side after a deterministic event sequence."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from smith_tui.engine import events as ev
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.usage_pane import UsagePane
from tests.app.app_harness import wait_for_still_screen, wait_for_text
from tests.app.test_panes import SIZE, PanesHost, dispatch_turn_events, usage


def test_panes_snapshot(snap_compare: Any) -> None:
    app = PanesHost()

    async def feed(pilot: Pilot[None]) -> None:
        app.query_one(UsagePane).set_pricing("big-model", 2e-6, 8e-6)
        totals: dict[str, dict[str, int]] = {}
        app.feed(
            ev.TurnStarted(turn_id="t0", conversation_id="c1", prompt="Summarise the repo"),
            usage("t0", 4000, 600, totals),
            ev.TurnFinished(turn_id="t0", conversation_id="c1", stop_reason="completed"),
        )
        events = dispatch_turn_events(totals)
        app.feed(*events[:4])
        app.clock.advance(7.5)
        app.feed(*events[4:])
        app.clock.advance(2.25)
        app.feed(
            ev.TodoUpdated(
                items=[
                    {"content": "find the loader", "status": "done"},
                    {"content": "fix the merge order", "status": "in_progress"},
                    {"content": "run the config tests", "status": "pending"},
                ]
            )
        )
        await pilot.pause()
        app.query_one(DispatchTree).select_job("job-explore")
        await wait_for_text(pilot, "2.4k in · 300 out")
        await wait_for_still_screen(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=feed)
