"""Engine events merged for the screen: adjacent deltas of one stream become one.

The event bridge (``smith_tui/app/bridge.py``) merges each frame's events with this, and the
dispatch tree keeps a job's round the same way, so both show a stream as one growing text.
Tool output keeps only the tail that can show (:func:`~smith_tui.widgets.output_tail.tail_text`).
"""

from __future__ import annotations

import dataclasses
from collections import deque

from smith_tui.engine import events as ev
from smith_tui.widgets.output_tail import tail_text

MERGEABLE = (ev.TextDelta, ev.ReasoningDelta, ev.ToolOutputDelta)
"""The delta events that merge with the one before them when both are of one stream."""


def _stream_key(event: ev.Event) -> tuple[object, ...] | None:
    if not isinstance(event, MERGEABLE):
        return None
    call_id = event.call_id if isinstance(event, ev.ToolOutputDelta) else None
    return (type(event), event.role, event.job_id, event.turn_id, call_id)


def _bounded(event: ev.Event) -> ev.Event:
    """``event``, with tool output cut to the tail that can show."""
    if isinstance(event, ev.ToolOutputDelta):
        text = tail_text(event.text)
        if text is not event.text:
            return dataclasses.replace(event, text=text)
    return event


def append_merged(out: list[ev.Event] | deque[ev.Event], event: ev.Event) -> None:
    """Add ``event`` to ``out``, merged into the last event when both are of one stream."""
    key = _stream_key(event)
    if key is not None and out and _stream_key(out[-1]) == key:
        previous = out[-1]
        assert isinstance(previous, MERGEABLE) and isinstance(event, MERGEABLE)  # by the key
        out[-1] = _bounded(dataclasses.replace(previous, text=previous.text + event.text))
    else:
        out.append(_bounded(event))


def coalesce(events: list[ev.Event]) -> list[ev.Event]:
    """Merge runs of adjacent deltas of one stream into one delta each; order is kept.

    Tool output keeps only the tail that can show (see :func:`tail_text`).
    """
    out: list[ev.Event] = []
    for event in events:
        append_merged(out, event)
    return out
