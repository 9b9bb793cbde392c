"""Checks and normalises a transcript before it is sent.

The rules (all enforced before any byte goes out):

* every message is a mapping with a known ``role``;
* an assistant ``tool_calls`` entry has a non-empty string ``id`` and a
  function ``name``; ids are unique across the whole transcript;
* a ``tool`` message answers a call that is still pending (issued earlier,
  not yet answered); answering twice or answering an unknown id is an error;
* once an assistant message issued tool calls, every one of them must be
  answered before the next non-tool message - and before the end of the
  transcript: a trailing unanswered call is rejected too, because providers
  refuse it (the caller must append a result, e.g. "cancelled", first);
* tool content is stringified (``None`` -> ``""``, text parts are joined,
  other dicts/lists become JSON); tool arguments given as objects become JSON
  text and empty arguments become ``"{}"``.

Shape problems raise ``LLMError(kind="schema", code="schema_invalid")``, order
problems ``LLMError(kind="protocol", code="protocol_invalid")``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from smith_tui.llm.errors import protocol_error, schema_error

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def stringify_content(value: Any) -> str:
    """Tool result content as text: text parts joined, other structures as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if (
        isinstance(value, list)
        and value
        and all(isinstance(p, Mapping) and p.get("type") == "text" for p in value)
    ):
        return "".join(str(p.get("text", "")) for p in value)
    if isinstance(value, Mapping | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _arguments_text(value: Any, where: str) -> str:
    if value is None or value == "":
        return "{}"
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    raise schema_error(f"{where}: function.arguments must be a JSON string or an object")


def _sanitize_call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, Mapping):
        raise schema_error(f"{where} must be an object with id, type and function")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise schema_error(f"{where} has no id; every assistant tool call needs a non-empty id")
    function = call.get("function")
    if not isinstance(function, Mapping):
        raise schema_error(f"{where} ({call_id}) has no function object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise schema_error(f"{where} ({call_id}) has no function name")
    out = dict(call)
    out["type"] = call.get("type") or "function"
    out["function"] = {
        **function,
        "arguments": _arguments_text(function.get("arguments"), where),
    }
    return out


def sanitize_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Validate the transcript order and return normalised copies of the messages."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise schema_error("messages must be a list of message objects")
    if not messages:
        raise schema_error("messages must not be empty")
    out: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    pending: dict[str, int] = {}  # call id -> index of the assistant message that issued it
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, Mapping):
            raise schema_error(f"{where} must be an object with a role, got {type(msg).__name__}")
        role = msg.get("role")
        if role not in ROLES:
            raise schema_error(f"{where} has role {role!r}; expected one of {sorted(ROLES)}")
        if role != "tool" and pending:
            raise protocol_error(
                f"{where} ({role}) follows unanswered tool call(s) {sorted(pending)}; "
                "append a tool result for each call first",
                data={"pending": sorted(pending), "index": i},
            )
        clean = dict(msg)
        if role == "assistant":
            calls = msg.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list):
                    raise schema_error(f"{where}.tool_calls must be a list")
                sanitized = []
                for j, call in enumerate(calls):
                    call_out = _sanitize_call(call, f"{where}.tool_calls[{j}]")
                    call_id = call_out["id"]
                    if call_id in seen_ids:
                        raise protocol_error(
                            f"{where}.tool_calls[{j}] reuses tool call id {call_id!r}",
                            data={"id": call_id, "index": i},
                        )
                    seen_ids.add(call_id)
                    pending[call_id] = i
                    sanitized.append(call_out)
                if sanitized:
                    clean["tool_calls"] = sanitized
                else:
                    del clean["tool_calls"]
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise schema_error(f"{where} is a tool result without tool_call_id")
            if call_id not in pending:
                reason = (
                    "was already answered"
                    if call_id in seen_ids
                    else "matches no earlier tool call"
                )
                raise protocol_error(
                    f"{where} answers tool call {call_id!r}, which {reason}",
                    data={"id": call_id, "index": i},
                )
            del pending[call_id]
            clean["content"] = stringify_content(msg.get("content"))
        out.append(clean)
    if pending:
        raise protocol_error(
            f"the transcript ends with unanswered tool call(s) {sorted(pending)}; "
            "append a tool result for each before calling the model",
            data={"pending": sorted(pending)},
        )
    return out
