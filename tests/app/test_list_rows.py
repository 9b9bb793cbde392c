"""One-paragraph list items are drawn by one widget each and look as Textual draws them."""

from __future__ import annotations

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.app import App, ComposeResult
from textual.widgets import Markdown

from smith_tui.widgets.transcript.code_markdown import CodeMarkdown
from smith_tui.widgets.transcript.list_rows import ListRow

LISTS = """Intro paragraph.

- a short item with `code` and **bold**
- see [the docs](https://example.com/a/very/long/path/that/does/not/fit/in/forty/columns) now
- https://example.com/an/unbroken/address/longer/than/the/whole/terminal/width
- a long item that goes on and on so that it has to wrap over several lines of the narrow terminal
- an item with two paragraphs

  its second paragraph
- an item with a nested list
  - nested one
  - nested two

1. first step
2. a second step long enough to wrap under its own number on the narrow terminal width
3. third
4. fourth
5. fifth
6. sixth
7. seventh
8. eighth
9. ninth
10. tenth, whose number is wider
"""


class OneDocument(App[None]):
    """One Markdown document of the given class, 40 columns wide."""

    CSS = "Screen { overflow-y: hidden; } Markdown { width: 40; height: auto; }"

    def __init__(self, kind: type[Markdown], theme: str) -> None:
        super().__init__()
        self.kind = kind
        self.theme = theme

    def compose(self) -> ComposeResult:
        yield self.kind(LISTS, id="doc")


def _cells(segments: list[Segment]) -> list[tuple[str, str]]:
    """Each cell's character and style (a blank's foreground colour cannot be seen)."""
    out = []
    for segment in segments:
        style = segment.style or Style()
        for char in segment.text:
            shown = style.background_style if char == " " else style
            out.append((char, str(shown)))
    return out


async def _screen(
    kind: type[Markdown], theme: str
) -> tuple[list[list[tuple[str, str]]], int, list[ListRow]]:
    """The screen's cells (text and style), the document's widget count and its rows."""
    app = OneDocument(kind, theme)
    async with app.run_test(size=(40, 60)) as pilot:
        await pilot.pause()
        await pilot.pause()
        doc = app.query_one("#doc")
        cells = [_cells(list(strip)) for strip in app.screen._compositor.render_strips()]
        return cells, len(list(doc.query("*"))), list(doc.query(ListRow))


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_one_paragraph_items_become_rows_and_render_like_textual(theme: str) -> None:
    textual_lines, textual_widgets, _ = await _screen(Markdown, theme)
    ours_lines, ours_widgets, rows = await _screen(CodeMarkdown, theme)
    # Four one-paragraph bullets, ten numbered items and the two nested ones are rows; the
    # item with two paragraphs and the one holding a list keep Textual's widgets.
    assert [row.symbol for row in rows] == [
        "\u2022 ", "\u2022 ", "\u2022 ", "\u2022 ", "\u25aa ", "\u25aa ",
        *(f"{n}. ".rjust(5) for n in range(1, 11)),
    ]  # fmt: skip
    assert ours_widgets == textual_widgets - 16 * 3  # each row: one widget instead of four
    assert ours_lines == textual_lines  # same text, same styles, cell for cell
