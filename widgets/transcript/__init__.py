"""The transcript pane: messages, streamed Markdown, tool calls and dispatch cards."""

from smith_tui.widgets.transcript.transcript import Loader, Transcript

__all__ = ["Loader", "Transcript"]
