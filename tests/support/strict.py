"""A strict-provider check for transcripts, and reading a stored one back from SQLite.

``smith_tui.llm.sanitize_messages`` enforces the Chat-Completions order rules (every tool call
answered once, ids unique, no trailing unanswered call). Strict providers refuse more than
that, so :func:`strict_problems` adds the rules they apply on top: the system prompt only at
the start, a user message first, no assistant message without text and without tool calls,
and tool-call arguments that parse as a JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from smith_tui.engine.persistence import message_dict
from smith_tui.engine.prompt import to_wire
from smith_tui.llm import LLMError, sanitize_messages
from smith_tui.store import Store

SYSTEM_PLACEHOLDER = {"role": "system", "content": "system prompt"}


def strict_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Everything a strict provider would refuse in ``messages`` (empty: it would accept them)."""
    problems: list[str] = []
    try:
        # What the client sends: empty arguments become "{}" and so on.
        messages = sanitize_messages(list(messages))
    except LLMError as exc:
        problems.append(f"sanitize_messages: {exc.message}")
    seen_other = False
    first_turn_role: str | None = None
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role in ("system", "developer"):
            if seen_other:
                problems.append(f"messages[{i}]: {role} message after the conversation started")
            continue
        seen_other = True
        if first_turn_role is None:
            first_turn_role = str(role)
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            content = msg.get("content")
            if not calls and not (isinstance(content, str) and content.strip()):
                problems.append(f"messages[{i}]: assistant message with no text and no tool calls")
            for j, call in enumerate(calls):
                arguments = (call.get("function") or {}).get("arguments")
                try:
                    parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
                except ValueError:
                    problems.append(
                        f"messages[{i}].tool_calls[{j}]: arguments are not JSON: {arguments!r:.80}"
                    )
                    continue
                if not isinstance(parsed, dict):
                    problems.append(
                        f"messages[{i}].tool_calls[{j}]: arguments are not a JSON object"
                    )
        elif role == "tool" and not isinstance(msg.get("content"), str):
            problems.append(f"messages[{i}]: tool result content is not a string")
    if first_turn_role not in (None, "user"):
        problems.append(f"the conversation starts with {first_turn_role!r}, not 'user'")
    return problems


def stored_wire(db_path: str | Path, conversation_id: str | None = None) -> list[dict[str, Any]]:
    """The wire form of a stored conversation, as the engine would send it (system prompt
    placeholder first). Without ``conversation_id``: the one top-level conversation."""
    with Store.open(db_path) as store:
        if conversation_id is None:
            top = [c for c in store.conversations.list_all() if not c.parent_id]
            if len(top) != 1:
                raise AssertionError(f"expected one top-level conversation, found {len(top)}")
            conversation_id = top[0].id
        stored = store.conversations.list_messages(conversation_id)
        return [SYSTEM_PLACEHOLDER, *(to_wire(message_dict(m)) for m in stored)]


def orphan_calls(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Ids of assistant tool calls that no tool message answers."""
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    return [
        call.get("id")
        for m in messages
        if m.get("role") == "assistant"
        for call in (m.get("tool_calls") or [])
        if call.get("id") not in answered
    ]
