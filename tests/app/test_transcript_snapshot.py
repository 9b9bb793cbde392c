"""A snapshot of the transcript: user message, streamed answer with code, tool entry, card."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from smith_tui.engine import events as ev
from tests.app.app_harness import wait_for_still_screen
from tests.support.transcript_app import TranscriptApp, chunks

ANSWER = """I found the problem in `config.py`:

```python
def load(path: str) -> dict:
    with open(path) as handle:

        return json.load(handle)
```

- the file is opened without an encoding
- errors are not reported
"""

DISPATCH = {
    "role": "explorer",
    "status": "ok",
    "summary": "The loader is only called from cli.py.",
    "findings": ["cli.py calls load() once at start-up"],
    "evidence": ["cli.py:41"],
}


def test_transcript_snapshot(snap_compare: Any) -> None:
    app = TranscriptApp()

    async def feed(pilot: Pilot[None]) -> None:
        transcript = app.transcript
        transcript.handle_event(
            ev.TurnStarted(turn_id="t", conversation_id="c", prompt="Why does loading fail?")
        )
        for piece in chunks(ANSWER, 9):
            transcript.handle_event(ev.TextDelta(turn_id="t", text=piece))
        transcript.handle_event(ev.AssistantMessage(turn_id="t", content=ANSWER))
        transcript.handle_event(
            ev.ToolCallStarted(
                turn_id="t", call_id="c1", name="bash", arguments='{"command": "pytest -q tests"}'
            )
        )
        transcript.handle_event(
            ev.ToolCallFinished(
                turn_id="t",
                call_id="c1",
                name="bash",
                ok=True,
                duration_s=1.25,
                summary="3 passed",
                content="3 passed in 0.12s",
            )
        )
        transcript.add_tool_call(
            "c2", "dispatch", {"target_role": "explorer", "task": "Find callers"}
        )
        transcript.finish_tool_call("c2", True, 12.5, "ok", "", {"dispatch": DISPATCH})
        await transcript.settle()
        await wait_for_still_screen(pilot)

    assert snap_compare(app, terminal_size=(90, 40), run_before=feed)
