"""One draw of a streamed answer's growing part: kept rows against a whole-part draw.

Run with ``.venv/bin/python bench/tail_draw.py [--runs 3]``. A Textual Pilot app at 160x50
streams a long answer until its ``LineTemplates`` are ready; then each 800-980-character part
of another realistic answer (headings, lists, fenced Python with type hints) is drawn 20
characters at a time, as a growing part is while it streams. ``kept`` is
``line_markdown.part_lines`` (the rows up to the last safe boundary kept between draws);
``whole`` parses and draws every prefix whole, as the draw did before. Each run prints the
median and mean of its draws (after one untimed draw of each part: first-use costs such as
the Python lexer are left out); the runs' medians are then given with their min-max.
With ``--tables`` the parts are ``bench/reopen.py``'s answer's (a table and three code
blocks in every section).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import reopen  # noqa: E402

from smith_tui.widgets.transcript.block_split import split_parts  # noqa: E402
from smith_tui.widgets.transcript.line_markdown import (  # noqa: E402
    Templates,
    Unsupported,
    _boxed,
    _stack,
    build_blocks,
    part_lines,
)
from tests.app.test_line_parts import stream  # noqa: E402
from tests.support.transcript_app import TranscriptApp, sample_markdown  # noqa: E402


def whole(templates: Templates, source: str, width: int) -> object:
    """The draw before the kept rows: every block of ``source`` parsed and drawn."""
    part = templates.part
    templates._colors.clear()
    blocks = [*build_blocks(part, source)]  # type: ignore[arg-type]
    if blocks:
        blocks[0].add_class("-first")
    return _boxed(part, width, lambda inner: _stack(blocks, part, inner, templates, ()), templates)


async def one_run(tables: bool = False) -> dict[str, list[float]]:
    """Seconds per draw, for each way."""
    app = TranscriptApp()
    async with app.run_test(size=(160, 50)) as pilot:
        message = await stream(pilot, sample_markdown(24))
        widget = message.body._templates
        assert widget is not None and widget.ready
        width = message.body._tail.size.width
        answer = reopen.realistic_answer(30_000) if tables else sample_markdown(40)
        parts = split_parts(answer, 800)[1:-1]
        warm = Templates([widget._firsts, widget._catalog])
        for text in parts:  # first-use costs (lexers, imports) left out of the timing
            whole(warm, text, width)
        times: dict[str, list[float]] = {"kept": [], "whole": []}
        for name, draw in (("kept", part_lines), ("whole", whole)):
            templates = Templates([widget._firsts, widget._catalog])
            for text in parts:
                for end in range(20, len(text) + 20, 20):
                    started = time.perf_counter()
                    try:
                        draw(templates, text[:end], width)
                    except Unsupported:
                        continue
                    times[name].append(time.perf_counter() - started)
    return times


def main() -> None:
    """Run and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tables", action="store_true", help="reopen.py's answer's parts")
    args = parser.parse_args()
    runs = args.runs
    medians: dict[str, list[float]] = {"kept": [], "whole": []}
    for _ in range(runs):
        for name, values in asyncio.run(one_run(args.tables)).items():
            medians[name].append(statistics.median(values))
            print(
                f"{name:5} {len(values)} draws: median {statistics.median(values) * 1e3:.2f} ms,"
                f" mean {statistics.mean(values) * 1e3:.2f} ms"
            )
    print(f"load {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, values in medians.items():
        values.sort()
        print(
            f"{name:5} median of {runs} runs {statistics.median(values) * 1e3:.2f} ms"
            f" ({values[0] * 1e3:.2f}-{values[-1] * 1e3:.2f})"
        )


if __name__ == "__main__":
    main()
