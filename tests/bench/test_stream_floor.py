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


EXACT = Path(__file__).resolve().parents[2] / "bench" / "stream_lines"

COMPARE = textwrap.dedent(
    """
    import asyncio
    from textual._compositor import Compositor
    from textual.geometry import Size
    from line_markdown import Templates, part_lines
    from smith_tui.widgets.transcript.streaming_markdown import MarkdownPart
    from tests.support.transcript_app import TranscriptApp, sample_markdown

    TEXT = (
        "## Step 1\\n\\nIt changes `a.py` so that **every** caller gets *one* value, "
        "~~not two~~, and [a link](https://example.com) too; long enough to wrap.\\n\\n"
        "# Big title\\n\\nAnother paragraph.\\n\\n### Third\\n\\n#### Fourth\\n\\n"
        + sample_markdown(3)
    )

    def composited(part):
        gutter = part.styles.gutter
        outer = part.outer_size
        inner = Size(outer.width - gutter.width, outer.height - gutter.height)
        size = Size(outer.width, part.arrange(inner).total_region.bottom + gutter.height)
        compositor = Compositor()
        compositor.reflow(part, size)
        return compositor.render_strips(size)

    def cells(strips):
        return [[(c, s.style) for s in strip for c in s.text] for strip in strips]

    async def main(width, theme):
        app = TranscriptApp()
        async with app.run_test(size=(width, 60)) as pilot:
            app.theme = theme
            transcript = app.transcript
            await transcript.load_messages(  # given whole: built as widgets, not streamed
                [
                    {"role": "user", "content": "q", "position": 0},
                    {"role": "assistant", "content": TEXT, "position": 1},
                ]
            )
            await transcript.settle()
            await pilot.pause()
            parts = list(transcript.query(MarkdownPart))
            for part in parts:
                templates = Templates([part] + [p for p in parts if p.follows == part.follows])
                want = cells(composited(part))
                got = cells(part_lines(templates, part.text, part.outer_size.width))
                print(width, theme, len(part.text), len(want), want == got, flush=True)

    for width in (60, 157):
        for theme in ("textual-dark", "textual-light"):
            asyncio.run(main(width, theme))
    """
)


def test_exact_lines_match_textuals_widgets_cell_for_cell() -> None:
    """What the exact-lines figure measures draws what the shipped widgets draw."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(EXACT), str(root)])}
    done = subprocess.run(
        [sys.executable, "-c", COMPARE], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert len(rows) >= 8 and {row[1] for row in rows} == {"textual-dark", "textual-light"}
    assert all(row[4] == "True" for row in rows), done.stdout
