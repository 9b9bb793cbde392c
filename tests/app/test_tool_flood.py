"""A tool that floods its output: the app stays responsive and its memory bounded.

A real turn against the scripted server runs a real ``bash`` that prints 100 MB without a
newline; the app, under Textual Pilot, must answer typing while it runs and must not keep
the flood in memory (the activity pane shows a few lines; everything else is dropped).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events

from smith_tui.engine import events as ev
from smith_tui.widgets.activity import ToolActivity
from smith_tui.widgets.output_tail import CUT_MARK, LINE_CHARS
from smith_tui.widgets.prompt_input import PromptInput
from tests.app.app_harness import (
    make_app,
    running,
    screen_text,
    submit,
    wait_for_text,
    wait_until,
)
from tests.support.llm_server import text_reply, tool_call

#: Characters the tool prints, at least, before the test lets it finish.
FLOOD_CHARS = 100_000_000
BURST_BYTES = 4_000_000
# Measured on a 2-core machine, with the pane keeping the whole unfinished line (before the
# bounded tail) and with it: keys answered in 0.4-1.8 s / 0.04 s, the resident set grew by
# 308 MiB / 2 MiB, 100 MB of output got through in about 50 s / well under 1 s.
#: Seconds a key press may take to show while the flood runs.
ANSWER_WITHIN_S = 10.0
#: Seconds the 100 MB may take to get through the tool and the app.
FLOOD_WITHIN_S = 30.0
#: Growth of the resident set allowed while the flood runs.
MAX_GROWTH_BYTES = 100 * 1024 * 1024


def resident_bytes() -> int:
    """This process's resident set size, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


class PeakResident:
    """Samples the resident set size in a thread; ``peak`` is the largest seen."""

    def __init__(self, every_s: float = 0.02) -> None:
        self.every_s = every_s
        self.peak = resident_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.peak = max(self.peak, resident_bytes())

    def __enter__(self) -> PeakResident:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, resident_bytes())


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads RSS from /proc")
async def test_a_100_mb_line_keeps_the_app_responsive_and_its_memory_bounded(
    runtime, llm_server, tmp_path
) -> None:
    release = tmp_path / "project" / "release"  # inside the project: the sandbox's /tmp is its own
    # One line of x, in 4 MB bursts, until the test releases it.
    command = f"while [ ! -e '{release}' ]; do head -c {BURST_BYTES} /dev/zero | tr '\\0' x; done"
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": command, "timeout_s": 300})]),
        text_reply("The flood is over."),
    )
    emitted = [0]  # characters of output the engine has emitted so far
    finished: list[ev.ToolCallFinished] = []

    def count(event: ev.Event) -> None:
        if isinstance(event, ev.ToolOutputDelta):
            emitted[0] += len(event.text)
        elif isinstance(event, ev.ToolCallFinished):
            finished.append(event)

    runtime.bus.subscribe(count)
    try:
        await flood_the_app(runtime, emitted, stop=release.touch)
    finally:
        release.touch()  # a failed test must not leave the loop running
    (result,) = finished
    assert result.ok and result.metadata["stdout_bytes"] >= FLOOD_CHARS


async def flood_the_app(runtime, emitted: list[int], stop: Callable[[], object]) -> None:
    """Run the flooding turn in the app; ``stop`` ends the tool's output."""
    app = make_app(runtime)
    async with running(app) as pilot:
        activity = app.screen.query_one(ToolActivity)
        prompt = app.screen.query_one(PromptInput)
        loop = asyncio.get_running_loop()
        baseline = resident_bytes()
        with PeakResident() as memory:
            await submit(pilot, "flood me")
            await wait_until(pilot, lambda: emitted[0] >= 40_000_000, within=30, what="the flood")

            async def type_and_see() -> None:
                # Keys reach the app as a terminal sends them (Pilot's press would also wait
                # for the process to go idle, which it never does during a flood).
                for char in "hello":
                    app.post_message(events.Key(char, char))
                await wait_until(pilot, lambda: "hello" in screen_text(app), within=60)

            started = loop.time()
            try:
                await asyncio.wait_for(type_and_see(), ANSWER_WITHIN_S)
            except TimeoutError:
                pytest.fail(
                    f"typing did not show within {loop.time() - started:.1f} s "
                    f"while the tool printed {emitted[0]:,} characters"
                )
            # The tool is still flooding: it stops only once the test releases it.
            assert prompt.text == "hello"
            await wait_until(
                pilot, lambda: emitted[0] >= FLOOD_CHARS, within=FLOOD_WITHIN_S, what="100 MB"
            )
        growth = memory.peak - baseline
        assert growth < MAX_GROWTH_BYTES, f"the app grew by {growth / 2**20:.0f} MiB"
        # What shows is the end of the line, cut: the pane holds no more than that.
        call = activity.calls[-1]
        assert call.state == "running"
        (line,) = call.tail_lines(activity.tail_size)
        assert line.startswith(CUT_MARK) and set(line[1:]) == {"x"}
        assert len(line) <= LINE_CHARS

        stop()
        await wait_for_text(pilot, "The flood is over.", within=30)
        await wait_until(pilot, lambda: not runtime.busy, what="the turn to end")
