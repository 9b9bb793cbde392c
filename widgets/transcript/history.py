"""Turn stored conversation messages into transcript entries."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from smith_tui.engine.attachments import display_text
from smith_tui.engine.kept_notices import NOTICES_KEY
from smith_tui.widgets.transcript.entries import (
    AssistantEntry,
    ChangesEntry,
    DispatchEntry,
    Entry,
    NoticeEntry,
    ToolEntry,
    UserEntry,
)
from smith_tui.widgets.transcript.turn_changes import changes_entry
from smith_tui.widgets.transcript.turn_notices import stored_notice, turn_end_notice


def message_text(content: Any) -> str:
    """The text of a message's content (a string or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return str(content)


def dispatch_result_of(name: str, content: str, metadata: dict[str, Any]) -> dict[str, Any] | None:
    """The dispatch result carried by a ``dispatch`` tool result, if any."""
    if name != "dispatch":
        return None
    result = metadata.get("dispatch")
    if isinstance(result, dict):
        return result
    try:
        parsed = json.loads(content)
    except (TypeError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) and "status" in parsed else None


def first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line of ``text``, shortened to ``limit`` characters."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def entries_from_messages(
    messages: list[dict[str, Any]],
    *,
    role: str = "direct",
    drop_unanswered_calls: bool = False,
    marks: Mapping[str, dict[str, Any]] | None = None,
    continued_turn: str | None = None,
    records: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Entry]:
    """Build the entries for stored messages (oldest first).

    Tool results finish the call entry of the assistant message that asked for
    them; a result whose call is not in ``messages`` gets an entry of its own.
    ``drop_unanswered_calls`` leaves out calls whose result is not in
    ``messages`` (for a page of older history whose results are already shown).
    ``marks`` (turn id → the turn's checkpoint mark) puts a :class:`ChangesEntry` after
    the last message of each turn that changed files, except after the last turn of
    ``messages`` when it is ``continued_turn`` (its end is in newer messages).
    ``records`` (turn id → the turn's stored record) names the role of each turn's answers
    and puts back the notices the turn showed live: its retries and warnings where they
    came, and how it ended (error, cancel, a truncated answer) after its mark.
    """
    entries: list[Entry] = []
    open_calls: dict[str, ToolEntry] = {}
    marks = marks or {}
    records = records or {}
    turn: str | None = None
    last_position: int | None = None
    for message in messages:
        if not isinstance(message, dict):
            continue
        position = message.get("position")
        position = position if isinstance(position, int) else None
        if message.get("turn_id") != turn:
            _end_turn(entries, marks, records, turn, last_position)
            turn = message.get("turn_id")
        last_position = position
        record = records.get(turn) if turn else None
        kind = message.get("role")
        raw_metadata = message.get("metadata")
        metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
        text = message_text(message.get("content"))
        if kind == "user":
            if record is not None:
                _add_commands(entries, record, position, before=True)
            # A prompt with @path attachments shows as typed, with a marker per file.
            attached = metadata.get("attachments")
            images = [a for a in attached or () if isinstance(a, dict) and a.get("kind") == "image"]
            entries.append(
                UserEntry(text=display_text(text, metadata), position=position, images=images)
            )
        elif kind == "assistant":
            reasoning = message_text(message.get("reasoning"))
            if text.strip() or reasoning.strip():
                agent = (
                    message.get("agent_role")
                    or metadata.get("role")
                    or (record or {}).get("role")
                    or role
                )
                entries.append(
                    AssistantEntry(
                        role=str(agent), text=text, reasoning=reasoning, position=position
                    )
                )
            for call in message.get("tool_calls") or []:
                entry = _call_entry(call, position)
                if entry is not None:
                    open_calls[entry.call_id] = entry
                    entries.append(entry)
        elif kind == "tool":
            _add_result(entries, open_calls, message, text, metadata, position)
        if record is not None:
            _add_notices(entries, record, position, first=kind == "user")
    if turn != continued_turn:
        _end_turn(entries, marks, records, turn, last_position)
    if drop_unanswered_calls:
        entries = [e for e in entries if not (isinstance(e, ToolEntry) and not e.finished)]
    return entries


def _end_turn(
    entries: list[Entry],
    marks: Mapping[str, dict[str, Any]],
    records: Mapping[str, Mapping[str, Any]],
    turn: str | None,
    position: int | None,
) -> None:
    """After a turn's last message: its file-change mark, then how it ended (as live)."""
    mark = marks.get(turn) if turn else None
    entry: ChangesEntry | None = changes_entry(mark, position) if mark else None
    if entry is not None:
        entries.append(entry)
    record = records.get(turn) if turn else None
    if record is None:
        return
    error = record.get("error")
    line = turn_end_notice(
        str(record.get("stop_reason") or ""), error if isinstance(error, Mapping) else None
    )
    if line is not None:
        entries.append(NoticeEntry(text=line[0], style=line[1], position=position))
    _add_commands(entries, record, position, before=False)


def _add_commands(
    entries: list[Entry], record: Mapping[str, Any], position: int | None, *, before: bool
) -> None:
    """The output of the slash commands typed after the turn ended (``before``: those typed
    before the conversation's first prompt, shown ahead of it)."""
    notices = record.get(NOTICES_KEY)
    for data in notices if isinstance(notices, list) else []:
        if isinstance(data, Mapping) and data.get("kind") == "command":
            if bool(data.get("before")) == before:
                line = stored_notice(data)
                if line is not None:
                    entries.append(NoticeEntry(text=line[0], style=line[1], position=position))


def _add_notices(
    entries: list[Entry], record: Mapping[str, Any], position: int | None, *, first: bool
) -> None:
    """The notices the turn showed just after the message at ``position`` (those shown
    before it stored anything but its prompt follow the prompt)."""
    notices = record.get(NOTICES_KEY)
    if not isinstance(notices, list):
        return
    for data in notices:
        if not isinstance(data, Mapping) or data.get("kind") == "command":
            continue  # a command's output follows the turn's end (_add_commands)
        after = data.get("after")
        if (after is None and first) or (after is not None and after == position):
            line = stored_notice(data)
            if line is not None:
                entries.append(NoticeEntry(text=line[0], style=line[1], position=position))


def _call_entry(call: Any, position: int | None) -> ToolEntry | None:
    if not isinstance(call, dict):
        return None
    nested = call.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else call
    name = function.get("name") or "tool"
    arguments = function.get("arguments") or ""
    return ToolEntry(
        call_id=str(call.get("id") or ""), name=str(name), arguments=arguments, position=position
    )


def _add_result(
    entries: list[Entry],
    open_calls: dict[str, ToolEntry],
    message: dict[str, Any],
    text: str,
    metadata: dict[str, Any],
    position: int | None,
) -> None:
    call_id = str(message.get("tool_call_id") or "")
    entry = open_calls.pop(call_id, None)
    if entry is None:
        entry = ToolEntry(
            call_id=call_id, name=str(message.get("name") or "tool"), position=position
        )
        entries.append(entry)
    entry.finished = True
    entry.ok = bool(metadata.get("ok", True))
    duration = metadata.get("duration_s")
    entry.duration_s = float(duration) if isinstance(duration, int | float) else None
    entry.content = text
    entry.summary = first_line(text)
    entry.metadata = dict(metadata)
    result = dispatch_result_of(entry.name, text, metadata)
    if result is not None:
        entries.append(DispatchEntry(result=result, position=position))
