"""A stored conversation as the session updates that showed it live (``session/load``).

Beyond the prompts, answers and tool calls (:func:`smith_tui.acp.updates.replay`): each
dispatch with its sub-agent's calls and its card (the step log and the report), the plan
where the todo list changed, the slash commands' output (kept by the engine with the turn
records), and how each turn ended when that showed (cancelled, failed, files changed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import (
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)

from smith_tui.acp import dispatch_card, updates
from smith_tui.engine.kept_notices import NOTICES_KEY
from smith_tui.tools.builtin.todo import validate_items

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

SUMMARY_CHARS = 120
"""A step's summary: the first line of its result, at most this long (as live)."""


def updates_of(runtime: Runtime, cwd: Path) -> list[Any]:
    """Every update that replays the runtime's active conversation, in order (blocking:
    reads the store)."""
    messages = list(runtime.conversations.messages)
    turn_ids = list(dict.fromkeys(str(m["turn_id"]) for m in messages if m.get("turn_id")))
    records = runtime.conversations.turn_records(turn_ids) if turn_ids else {}
    commands = _commands(records)
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    out: list[Any] = [*commands.pop(None, [])]
    current: str | None = None
    last: Any = None
    for message in messages:
        turn = message.get("turn_id")
        if current is not None and turn != current:
            out += turn_end(records.get(current)) + commands.pop(last, [])
        current, last = (str(turn) if turn else None), message.get("position")
        out += list(_message(runtime, message, cwd, calls))
    if current is not None:
        out += turn_end(records.get(current))
    for rest in commands.values():  # after the last message, or where no message is now
        out += rest
    return out


def _commands(records: Mapping[str, Mapping[str, Any]]) -> dict[Any, list[Any]]:
    """The typed commands' output the engine kept, as updates by the position of the
    message they followed (``None``: before the first one)."""
    found: dict[Any, list[Any]] = {}
    for record in records.values():
        for notice in record.get(NOTICES_KEY) or []:
            if not isinstance(notice, Mapping) or notice.get("kind") != "command":
                continue
            key = None if notice.get("before") else notice.get("after")
            found.setdefault(key, []).extend(command_turn(notice))
    return found


def command_turn(notice: Mapping[str, Any]) -> list[Any]:
    """A typed command (its name: the engine keeps no arguments) and its output."""
    text = str(notice.get("text") or "").rstrip("\n")
    shown: list[Any] = [update_user_message_text(str(notice.get("command") or "/"))]
    if text:
        shown.append(update_agent_message_text(text + "\n"))
    return shown


def turn_end(record: Mapping[str, Any] | None) -> list[Any]:
    """What showed when a turn ended: its error, the cancel, the files it changed."""
    if not record:
        return []
    shown: list[Any] = []
    stop = record.get("stop_reason")
    error = record.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    if stop == "cancelled":
        shown.append(update_agent_message_text("\n\n[cancelled]\n"))
    elif stop in ("error", "budget_exhausted") and message:
        shown.append(update_agent_message_text(f"\n\nsmith: turn ended: {message}\n"))
    mark = record.get("checkpoint")
    files = mark.get("files") if isinstance(mark, Mapping) else None
    if isinstance(files, list) and files:
        listed = ", ".join(" ".join(str(part) for part in item) for item in files[:12])
        more = f" and {len(files) - 12} more" if len(files) > 12 else ""
        count = f"{len(files)} file{'s' if len(files) != 1 else ''}"
        text = f"this turn changed {count}: {listed}{more} — /undo restores them"
        shown.append(update_agent_thought_text(f"\n[{text}]\n"))
    return shown


def _message(
    runtime: Runtime,
    message: Mapping[str, Any],
    cwd: Path,
    calls: dict[str, tuple[str, dict[str, Any]]],
) -> Iterator[Any]:
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        calls[str(call.get("id"))] = (
            str(function.get("name") or "tool"),
            updates.parse_arguments(function.get("arguments")),
        )
    if message.get("role") != "tool":
        for update in updates.replay([message], cwd):
            if message.get("role") == "user" and message.get("turn_id"):
                # The prompt's id is its turn's: session/fork's _meta.smith.beforeTurn takes it.
                update.message_id = str(message["turn_id"])
            yield update
        return
    name, args = calls.get(str(message.get("tool_call_id")), (message.get("name") or "", {}))
    result = updates.parse_arguments(str(message.get("content") or ""))
    if name == "dispatch" and result.get("status") and result.get("job_id"):
        yield from dispatch(runtime, message, result, args)
        return
    yield from updates.replay([message], cwd)
    ok = (message.get("metadata") or {}).get("ok", True)
    if name == "todo" and ok:
        try:
            yield updates.plan(validate_items(args.get("items")))
        except ValueError:  # not a list the tool took: it showed no plan either
            pass


def dispatch(
    runtime: Runtime, message: Mapping[str, Any], result: Mapping[str, Any], args: Mapping[str, Any]
) -> Iterator[Any]:
    """A dispatch's result (its report): the sub-agent's calls linked to it, then its card."""
    call_id = str(message.get("tool_call_id"))
    role = str(result.get("role") or args.get("target_role") or "sub-agent")
    job_id = str(result["job_id"])
    log = [dispatch_card.started(role, str(args.get("task") or ""))]
    child = _child_of(runtime, job_id)
    if child is not None:
        yield from _child_calls(runtime, child, job_id, role, call_id, log)
    ok = (message.get("metadata") or {}).get("ok", True) is not False
    final = update_tool_call(
        call_id,
        status="completed" if ok else "failed",
        content=updates.text_content(dispatch_card.card_text(log, role, result)),
    )
    final.field_meta = {"smith": {"job_id": job_id, "role": role, "status": result.get("status")}}
    yield final


def _child_of(runtime: Runtime, job_id: str) -> str | None:
    """The conversation of the sub-agent that ran ``job_id``."""
    conversation_id = runtime.conversations.conversation_id
    if not conversation_id:
        return None
    for child in runtime.store.conversations.children(conversation_id):
        if (child.metadata or {}).get("job_id") == job_id:
            return str(child.id)
    return None


def _child_calls(
    runtime: Runtime, child: str, job_id: str, role: str, parent: str, log: list[str]
) -> Iterator[Any]:
    from smith_tui.engine.persistence import message_dict

    meta = {"smith": {"job_id": job_id, "role": role, "parent": parent}}
    names: dict[str, str] = {}
    turn_id = None
    for stored in runtime.store.conversations.list_messages(child):
        message = message_dict(stored)
        turn_id = message.get("turn_id") or turn_id
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            name = str(function.get("name") or "tool")
            args = updates.parse_arguments(function.get("arguments"))
            call_id = str(call.get("id"))
            names[call_id] = name
            log.append(dispatch_card.step(updates.tool_title(name, args)))
            start = start_tool_call(
                f"{job_id}/{call_id}",
                updates.tool_title(name, args, role),
                kind=updates.tool_kind(name),
                status="in_progress",
                raw_input=args,
            )
            start.field_meta = meta
            yield start
        if message.get("role") == "tool":
            call_id = str(message.get("tool_call_id"))
            result_meta = message.get("metadata") or {}
            ok = bool(result_meta.get("ok", True)) and not result_meta.get("cancelled")
            content = str(message.get("content") or "")
            lines = content.strip().splitlines()
            log.append(
                dispatch_card.step_done(
                    names.get(call_id, "tool"), ok, lines[0][:SUMMARY_CHARS] if lines else ""
                )
            )
            done = update_tool_call(
                f"{job_id}/{call_id}",
                status="completed" if ok else "failed",
                content=updates.text_content(content),
            )
            done.field_meta = meta
            yield done
    record = runtime.store.notes.get_turn_record(child, turn_id) if turn_id else None
    if isinstance(record, Mapping) and record.get("stop_reason"):
        log.append(dispatch_card.turn_ended(role, str(record["stop_reason"])))
