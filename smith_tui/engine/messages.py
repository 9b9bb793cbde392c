"""The message dict the engine works with, as it crosses the engine, the store and the app.

A transcript message is a Chat-Completions wire message
(:class:`smith_tui.llm.WireMessage`) plus keys that stay local: they are stored
and shown, never sent (:func:`smith_tui.engine.prompt.to_wire` keeps only the
wire keys). The turn loop builds them (``assistant_message``, ``tool_message``),
:class:`smith_tui.engine.persistence.Persistence` writes them, and
:func:`smith_tui.engine.persistence.message_dict` turns a stored row back into one
for the engine and the app.
"""

from __future__ import annotations

from typing import Any

from smith_tui.llm.types import WireMessage


class TranscriptMessage(WireMessage, total=False):
    """A wire message with the engine's local keys.

    ``reasoning`` is the model's reasoning text; ``recall_key`` names the full
    output of a tool result the window may shorten; ``metadata`` holds what the
    engine and the app note about the message (a tool result's ``ok``,
    ``duration_s``, ``mutation_state``; an assistant message's ``raw_arguments``
    and ``reasoning_details``; ``compaction`` summaries); ``transient`` marks a
    message the window must keep. ``id``, ``position`` and ``turn_id`` are the
    store's, set once the message is written (``position`` is dense per
    conversation).
    """

    reasoning: str
    recall_key: str
    metadata: dict[str, Any]
    transient: bool
    id: int
    position: int
    turn_id: str | None
