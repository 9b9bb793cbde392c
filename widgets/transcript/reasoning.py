"""The model's reasoning, folded away by default."""

from __future__ import annotations

from textual.widgets import Collapsible

from smith_tui.widgets.transcript.streaming_markdown import StreamingMarkdown


class ReasoningBlock(Collapsible):
    """A collapsed section that reasoning streams into."""

    DEFAULT_CSS = """
    ReasoningBlock {
        height: auto;
    }
    """

    def __init__(self, reasoning: str = "", *, streaming: bool = False) -> None:
        self.document = StreamingMarkdown(reasoning, classes="reasoning-text")
        super().__init__(
            self.document,
            title="Thinking…" if streaming else "Reasoning",
            collapsed=True,
            classes="reasoning",
        )

    @property
    def source(self) -> str:
        """The reasoning text so far."""
        return self.document.source

    def write(self, text: str) -> None:
        """Append streamed reasoning."""
        self.document.write(text)

    async def finish(self) -> None:
        """The reasoning is complete."""
        await self.document.finish()
        self.title = "Reasoning"
