"""An answer that ends while a parking pass is queued ahead of its end job.

Under load the transcript's work queue falls behind: a parking pass asked for while the
answer streamed can run after ``end_assistant`` (which lets go of the live stream) but
before the job that writes the answer's last text and waits for it to render. That pass
must not park the answer: parked, it is out of the screen, its stream never renders, the
end job waits for ever and every later entry (the next prompt, tool calls) stays queued
behind it — the screen then shows the answer's header with nothing under it and nothing
after. Seen in a soak run at load 20.
"""

from __future__ import annotations

import asyncio

from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp, sample_markdown


async def test_an_answer_ending_behind_a_queued_park_is_shown_and_the_queue_goes_on() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        for turn in range(4):  # a history taller than a few screens
            transcript.add_user(f"question {turn}")
            transcript.append_text(sample_markdown(6, marker=f"END-{turn}"))
            transcript.end_assistant()
        await transcript.settle()
        transcript.add_user("question 4")
        answer = transcript.begin_assistant()  # its header is up; no text has come yet
        await transcript.settle()
        await pilot.pause()
        transcript.scroll_to(y=0, animate=False, immediate=True)  # the user reads above
        await wait_until(
            pilot, lambda: transcript.scroll_y == 0 and not transcript.following, "view at the top"
        )

        gate = asyncio.Event()
        transcript._enqueue(gate.wait)  # the queue is behind (a slow job runs)
        transcript._on_park_timer()  # a parking pass asked for while the answer streamed
        transcript.append_text("The whole answer came at once: FINAL-MARKER\n")
        transcript.end_assistant()
        transcript.add_user("question 5")
        gate.set()

        await asyncio.wait_for(transcript.settle(), 20)
        assert answer.entry.text.endswith("FINAL-MARKER\n")
        transcript.scroll_end(animate=False)
        await wait_until(pilot, lambda: "FINAL-MARKER" in screen_text(app), "the answer's end")
        assert "question 5" in screen_text(app)
