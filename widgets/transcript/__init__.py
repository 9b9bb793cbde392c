"""The transcript pane: messages, streamed Markdown, tool calls and dispatch cards."""

from smith_tui.widgets.transcript.history_window import Loader
from smith_tui.widgets.transcript.transcript import Transcript

__all__ = ["Loader", "Transcript"]
