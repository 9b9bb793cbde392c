"""An assistant answer: role header, folded reasoning and the Markdown body."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from smith_tui.engine.presentation import role_label
from smith_tui.widgets.transcript.block_split import DEFAULT_PART_CHARS
from smith_tui.widgets.transcript.entries import AssistantEntry
from smith_tui.widgets.transcript.parking import child_offsets
from smith_tui.widgets.transcript.reasoning import ReasoningBlock
from smith_tui.widgets.transcript.streaming_markdown import StreamingMarkdown


class AssistantMessage(Vertical):
    """One assistant message; while streaming, text and reasoning are written into it."""

    DEFAULT_CSS = """
    AssistantMessage {
        height: auto;
    }
    """

    def __init__(
        self,
        entry: AssistantEntry,
        *,
        streaming: bool = False,
        part_chars: int = DEFAULT_PART_CHARS,
        built_rows: int | None = None,
    ) -> None:
        super().__init__()
        self.entry = entry
        self._streaming = streaming
        # A streamed answer's host parks it (the Transcript): a long write may defer parts.
        self.body = StreamingMarkdown(
            "" if streaming else entry.text,
            part_chars=part_chars,
            built_rows=built_rows,
            defer_far_parts=streaming,
            classes="answer",
        )
        self.reasoning: ReasoningBlock | None = None
        if entry.reasoning and not streaming:
            self.reasoning = ReasoningBlock(entry.reasoning)

    def compose(self) -> ComposeResult:
        """Header, reasoning (when there is some) and body."""
        header = Text(*role_label(self.entry.role))
        yield Static(header, classes="assistant-header")
        if self.reasoning is not None:
            yield self.reasoning
        yield self.body

    @property
    def source(self) -> str:
        """The Markdown text of the answer so far."""
        return self.body.source

    @property
    def streaming(self) -> bool:
        """True until :meth:`finish`."""
        return self._streaming

    def write_text(self, text: str) -> None:
        """Append streamed answer text (rendering happens in the background)."""
        self.body.write(text)

    async def write_reasoning(self, text: str) -> None:
        """Append streamed reasoning (the folded section appears with the first piece)."""
        if not text:
            return
        if self.reasoning is None:
            self.reasoning = ReasoningBlock(streaming=True)
            await self.mount(self.reasoning, before=self.body)
        self.reasoning.write(text)

    async def wait_rendered(self) -> None:
        """Wait until the text and reasoning written so far are rendered."""
        await self.body.wait_rendered()
        if self.reasoning is not None:
            await self.reasoning.document.wait_rendered()

    async def finish(self) -> None:
        """The stream ended: freeze everything and record the text in the entry."""
        await self.body.finish()
        if self.reasoning is not None:
            await self.reasoning.finish()
            self.entry.reasoning = self.reasoning.source
        self.entry.text = self.body.source
        self._streaming = False

    async def park_outside(self, window: tuple[int, int]) -> bool:
        """Park the parts of the answer outside ``window`` (rows of this message).

        Returns False when the answer should be looked at again after layout.
        """
        for child, top, _ in child_offsets(self.children):
            if child is self.body:
                start, end = window
                return await self.body.park_outside((start - top, end - top))
        return True

    async def clear(self) -> None:
        """Discard what was streamed so far."""
        await self.body.clear()
        if self.reasoning is not None:
            await self.reasoning.remove()
            self.reasoning = None
