"""CPU per streamed write of the transcript alone, in Pilot: to compare two trees quickly.

Run ``PYTHONPATH=<tree> .venv/bin/python bench/transcript_writes.py`` from the tree's folder
(a ``git worktree`` with ``smith_tui/widgets``, ``styles`` and ``data`` linked in, see
``bench/tui.py``). The shipped ``Transcript`` (``tests/support/transcript_app.py``, the
stylesheet the app uses) at 160×50 is given an answer with headings, prose, lists and code
blocks (16 KB) in 50 writes of 320 characters; each write is rendered and painted before the next, and
the process CPU time of each is taken. Printed: the median and mean of writes 11–50 and the
widgets in the transcript at the end. This is a harness, not the program: the table's
streaming figures come from ``bench/tui.py`` driving the real ``smith``; use this one to see
whether a change to the transcript moves the cost of a write at all, three runs per tree,
alternating.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path.cwd()
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.transcript_app import TranscriptApp, chunks, sample_markdown  # noqa: E402

WRITES = 50
WRITE_CHARS = 320


async def measure() -> tuple[list[float], int]:
    """CPU seconds of each write, and the transcript's widget count at the end."""
    app = TranscriptApp(flush_interval=0.1)
    async with app.run_test(size=(160, 50)) as pilot:
        transcript = app.transcript
        transcript.add_user("go")
        per_write: list[float] = []
        for piece in chunks(sample_markdown(60), WRITE_CHARS)[:WRITES]:
            started = time.process_time()
            transcript.append_text(piece)
            await transcript.settle()
            await pilot.pause()
            per_write.append(time.process_time() - started)
        return per_write, len(transcript.query("*"))


def main() -> int:
    per_write, widgets = asyncio.run(measure())
    steady = per_write[10:]
    print(
        f"CPU per write: median {statistics.median(steady) * 1000:.1f} ms, "
        f"mean {statistics.mean(steady) * 1000:.1f} ms ({len(steady)} writes); "
        f"widgets in the transcript at the end: {widgets}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
