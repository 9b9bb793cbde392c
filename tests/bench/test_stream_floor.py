"""The stream floor's patch (bench/stream_floor/sitecustomize.py) does what its figures
claim: a streamed answer shows as plain lines, every other document as Markdown."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

PATCH = Path(__file__).resolve().parents[2] / "bench" / "stream_floor"

SCRIPT = textwrap.dedent(
    """
    import asyncio
    from textual.app import App
    from smith_tui.widgets.transcript.streaming_markdown import MarkdownPart, StreamingMarkdown

    TEXT = "# Title\\n\\nSome *text* here.\\n\\n```python\\nx = 1\\n```\\n\\n" * 40

    class Host(App[None]):
        def compose(self):
            yield StreamingMarkdown(defer_far_parts=True, id="streamed")
            yield StreamingMarkdown(id="given")

    async def main():
        app = Host()
        async with app.run_test(size=(100, 40)) as pilot:
            for doc in app.query(StreamingMarkdown):
                for start in range(0, len(TEXT), 300):
                    doc.write(TEXT[start : start + 300])
                await doc.finish()
            await pilot.pause()
            for doc in app.query(StreamingMarkdown):
                kinds = sorted({type(child).__name__ for child in doc.query("*")})
                parts = len(doc.query(MarkdownPart))
                print(doc.id, doc.source == TEXT, parts, ",".join(kinds))

    asyncio.run(main())
    """
)


def test_only_a_streamed_answer_is_drawn_as_plain_lines() -> None:
    env = {**os.environ, "PYTHONPATH": str(PATCH)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    source_kept, parts, kinds = lines["streamed"].split(" ")
    assert source_kept == "True" and parts == "0" and kinds == "PlainLines"
    source_kept, parts, kinds = lines["given"].split(" ")
    assert source_kept == "True" and int(parts) > 1 and "PlainLines" not in kinds
