"""Tool payload helpers: schemas out, calls in, results back.

Naming of the one identifier across layers:

* the model's wire field is ``tool_calls[].id`` (:attr:`ToolCall.id`);
* the runtime calls it ``call_id`` (:attr:`ToolCall.call_id`, same value);
* the tool result message answers it as ``tool_call_id``
  (:func:`build_tool_result_message`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from smith_tui.llm.errors import schema_error
from smith_tui.llm.transcript_checks import stringify_content
from smith_tui.llm.types import ChatMessage, ChatResponse, ToolCall, ToolCallDelta, WireMessage


def _field(spec: Any, name: str) -> Any:
    if isinstance(spec, Mapping):
        return spec.get(name)
    return getattr(spec, name, None)


def build_tool_schema(tool_spec: Any) -> dict[str, Any]:
    """Wire schema for one tool from a spec with ``name``, ``description``, ``input_schema``.

    The spec may be a mapping or any object with those attributes.
    """
    name = _field(tool_spec, "name")
    if not isinstance(name, str) or not name.strip():
        raise schema_error("tool spec needs a non-empty string name")
    schema = _field(tool_spec, "input_schema")
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, Mapping):
        raise schema_error(f"tool {name!r}: input_schema must be a JSON-schema object")
    description = _field(tool_spec, "description") or ""
    if not isinstance(description, str):
        raise schema_error(f"tool {name!r}: description must be a string")
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": dict(schema)},
    }


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def extract_tool_calls(message: Any) -> list[ToolCall]:
    """Tool calls of an assistant message (wire dict, :class:`ChatMessage` or response)."""
    if isinstance(message, ChatResponse):
        return list(message.message.tool_calls)
    if isinstance(message, ChatMessage):
        return list(message.tool_calls)
    if not isinstance(message, Mapping):
        return []
    calls = message.get("tool_calls") or []
    out = []
    for call in calls:
        if isinstance(call, ToolCall):
            out.append(call)
            continue
        if not isinstance(call, Mapping):
            continue
        function = call.get("function") or {}
        out.append(
            ToolCall(
                id=str(call.get("id") or ""),
                name=str(function.get("name") or ""),
                arguments=_arguments(function.get("arguments")),
            )
        )
    return out


def extract_tool_call(message: Any) -> ToolCall | None:
    """The first tool call of ``message``, or ``None``."""
    calls = extract_tool_calls(message)
    return calls[0] if calls else None


def extract_stream_tool_calls(delta: Any) -> list[Mapping[str, Any]]:
    """Raw tool-call fragments of a stream delta (or of a whole chunk's first choice)."""
    if not isinstance(delta, Mapping):
        return []
    if "choices" in delta:
        choices = delta.get("choices") or []
        delta = next(
            (
                c.get("delta") or {}
                for c in choices
                if isinstance(c, Mapping) and c.get("index", 0) == 0
            ),
            {},
        )
    calls = delta.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [c for c in calls if isinstance(c, Mapping)]


class _Entry:
    __slots__ = ("args", "id", "name")

    def __init__(self) -> None:
        self.id: str = ""
        self.name: str = ""
        self.args: list[str] = []


class ToolCallState:
    """Accumulates streamed tool-call fragments into whole calls.

    Fragments are matched by ``index``; when ``index`` is missing, by ``id``,
    else they continue the latest call. The first non-empty ``id`` sticks
    (``""`` or a repeated id never overwrite it); a fragment with a *different*
    id at an index already in use starts a new call. The name is set once: a
    repeated name is not appended. Arguments are appended as they come.
    """

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._by_index: dict[Any, int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def merge(self, delta_calls: Any) -> list[ToolCallDelta]:
        """Fold fragments in; return one :class:`ToolCallDelta` per fragment that added something."""
        out: list[ToolCallDelta] = []
        entries = self._entries
        for raw in delta_calls:
            if not isinstance(raw, Mapping):
                continue
            index = raw.get("index")
            call_id = raw.get("id")
            if not isinstance(call_id, str):
                call_id = ""
            pos = self._position(index, call_id)
            if pos is None:
                entries.append(_Entry())
                pos = len(entries) - 1
                if index is not None:
                    self._by_index[index] = pos
            entry = entries[pos]
            changed = False
            if call_id and not entry.id:
                entry.id = call_id
                changed = True
            function = raw.get("function")
            fragment = ""
            if isinstance(function, Mapping):
                name = function.get("name")
                if isinstance(name, str) and name and not entry.name:
                    entry.name = name
                    changed = True
                fragment = _arguments(function.get("arguments"))
                if fragment:
                    entry.args.append(fragment)
            if changed or fragment:
                out.append(ToolCallDelta(pos, entry.id or None, entry.name, fragment))
        return out

    def _position(self, index: Any, call_id: str) -> int | None:
        entries = self._entries
        if index is not None and not isinstance(index, bool):
            pos = self._by_index.get(index)
            if pos is not None and call_id and entries[pos].id and entries[pos].id != call_id:
                return None  # same index, new id: the provider reused the slot for a new call
            return pos
        if call_id:
            for pos, entry in enumerate(entries):
                if entry.id == call_id:
                    return pos
            return None
        return len(entries) - 1 if entries else None

    def finish(self) -> list[ToolCall]:
        """The merged calls in arrival order; ids are minted (``call_<n>``) where none came,
        and an id the reply gives to two calls becomes ``<id>_<n>`` on the later one: each
        call needs its own result, and a transcript with a repeated id is refused."""
        used = {e.id for e in self._entries if e.id}
        taken: set[str] = set()
        calls = []
        for pos, entry in enumerate(self._entries):
            call_id = entry.id
            if not call_id or call_id in taken:
                base = call_id or f"call_{pos}"
                call_id = base
                suffix = 0
                while call_id in used:
                    suffix += 1
                    call_id = f"{base}_{suffix}"
                used.add(call_id)
            taken.add(call_id)
            calls.append(ToolCall(id=call_id, name=entry.name, arguments="".join(entry.args)))
        return calls


def merge_stream_delta(state: ToolCallState | None, delta_calls: Any) -> ToolCallState:
    """Fold a delta's tool-call fragments into ``state`` (a new one when ``None``)."""
    if state is None:
        state = ToolCallState()
    if isinstance(delta_calls, Mapping):
        delta_calls = extract_stream_tool_calls(delta_calls)
    state.merge(delta_calls or [])
    return state


def build_tool_result_message(call_id: str, output: Any) -> WireMessage:
    """The ``role: tool`` message answering ``call_id``; ``output`` is stringified."""
    if isinstance(call_id, ToolCall):
        call_id = call_id.id
    if not isinstance(call_id, str) or not call_id:
        raise schema_error("a tool result needs the non-empty id of the call it answers")
    return {"role": "tool", "tool_call_id": call_id, "content": stringify_content(output)}
