"""The stream floor's patch (bench/stream_floor.py puts this folder on smith's PYTHONPATH).

Python imports ``sitecustomize`` at start-up. This one makes a streamed answer's body
(``StreamingMarkdown`` with ``defer_far_parts``) show its text as plain lines in one
Line-API widget instead of Markdown blocks: no block widget is built, styled or laid out
while the answer streams, and nothing else changes (the engine, the panes, the flushes
every ``services.ui.stream_refresh_s``, the parking). What the real smith then costs is
what any transcript drawn as lines could cost at best: the floor under a Line-API redesign.
Never shipped: it exists only for that measurement.
"""

from __future__ import annotations


def _install() -> None:
    from rich.segment import Segment
    from textual.geometry import Size
    from textual.strip import Strip
    from textual.widget import Widget

    from smith_tui.terminal_text import visible
    from smith_tui.widgets.transcript import streaming_markdown

    class PlainLines(Widget):
        """Text wrapped at the widget's width, one row per line (Line API)."""

        DEFAULT_CSS = "PlainLines { height: auto; }"

        def __init__(self) -> None:
            super().__init__()
            self.text = ""
            self._rows: list[str] = []
            self._width = 0

        def append(self, text: str) -> None:
            self.text += text
            self._wrap()
            self.refresh(layout=True)

        def _wrap(self) -> None:
            width = max(1, self._width or 150)
            rows: list[str] = []
            for line in self.text.split("\n"):
                rows.extend(line[i : i + width] for i in range(0, len(line), width))
                if not line:
                    rows.append("")
            self._rows = rows

        def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
            if width != self._width:
                self._width = width
                self._wrap()
            return len(self._rows)

        def render_line(self, y: int) -> Strip:
            if 0 <= y < len(self._rows):
                return Strip([Segment(self._rows[y])])
            return Strip.blank(self.size.width)

    original = streaming_markdown.StreamingMarkdown.write

    def write(self: streaming_markdown.StreamingMarkdown, text: str) -> None:
        if not self.defer_far_parts:  # only a streamed answer's body
            original(self, text)
            return
        if not text:
            return
        lines = getattr(self, "_plain_lines", None)
        if lines is None:
            lines = self._plain_lines = PlainLines()
            self.mount(lines)
        lines.append(visible(text))
        # Keep the document's source as the original does (the answer's text is stored).
        self._splitter.feed(visible(text))
        while (head := self._splitter.cut(self._part_chars)) is not None:
            self._frozen.append(head)

    original_finish = streaming_markdown.StreamingMarkdown.finish

    async def finish(self: streaming_markdown.StreamingMarkdown) -> None:
        if getattr(self, "_plain_lines", None) is None:
            await original_finish(self)
            return
        # What the splitter still holds is shown already: keep it in the source only.
        self._frozen.append(self._splitter.text)
        self._splitter = streaming_markdown.BlockSplitter()

    streaming_markdown.StreamingMarkdown.write = write  # type: ignore[method-assign]
    streaming_markdown.StreamingMarkdown.finish = finish  # type: ignore[method-assign]


try:
    _install()
except ImportError:  # a Python started without smith_tui on its path (tools, pip)
    pass
