"""Checkpoints in the engine: one per top-level turn, taken before its first file change.

:class:`TurnCheckpoint` is what a turn's tools see as ``ToolServices.checkpoint``: the
executor awaits it before every call of a tool that changes files (``write``, ``edit``,
``bash``). The first call records the checkpoint (off the event loop); later calls, the
turn's dispatched workers' included, find it done. A checkpoint that cannot be taken (too
big, git missing) never stops the tool: the user gets a notice instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from smith_tui.config import EffectiveConfig, SmithConfig
from smith_tui.engine import events as ev
from smith_tui.store import Store
from smith_tui.terminal_text import visible
from smith_tui.tools.checkpoints.shadow_repo import (
    Change,
    Checkpoint,
    CheckpointError,
    Checkpoints,
)

log = logging.getLogger(__name__)

LABEL_WORDS = 8
"""A turn's label quotes at most this many words of its prompt."""

NOTICE_COMMAND = "checkpoint"
"""``CommandOutput.command`` of checkpoint notices (skipped checkpoints, turns that changed files)."""


def checkpoints_for(data_dir: Path, project_root: Path, config: SmithConfig) -> Checkpoints | None:
    """The project's checkpoints as configured (``checkpoints.*``), ``None`` when disabled."""
    if not config.checkpoints.enabled:
        return None
    return project_checkpoints(data_dir, project_root, config)


def describe_changes(changes: list[Change] | tuple[Change, ...], limit: int = 12) -> str:
    """``A new.py, M app.py, D old.py`` (at most ``limit`` files, then how many more)."""
    shown = [f"{c.status} {c.path}" for c in changes[:limit]]
    more = len(changes) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


class TurnCheckpoint:
    """The checkpoint of one top-level turn, recorded at most once, on the first file change."""

    def __init__(
        self,
        checkpoints: Checkpoints | None,
        *,
        turn_id: str,
        conversation_id: str,
        prompt: str,
        emit: Callable[[ev.Event], None],
        role: str = "direct",
    ) -> None:
        self.checkpoints = checkpoints
        self.turn_id = turn_id
        self.conversation_id = conversation_id
        self.prompt = prompt
        self.role = role
        self._emit = emit
        self._lock = asyncio.Lock()
        self._tried = False
        self.recorded: Checkpoint | None = None
        self.mark: dict[str, Any] | None = None
        """Once the turn changed files: ``checkpoint``, ``turn_id`` and ``files`` (the turn's
        record keeps it, so the transcript can mark the turn again when it is loaded)."""

    async def __call__(self) -> None:
        """Record the checkpoint unless this turn did already (tools await this)."""
        if self._tried or self.checkpoints is None:
            return
        async with self._lock:
            if self._tried:
                return
            self._tried = True
            checkpoints = self.checkpoints
            try:
                self.recorded = await asyncio.to_thread(
                    checkpoints.record_turn,
                    self.turn_id,
                    self.conversation_id,
                    self.prompt[:500],
                    {"message_turn": self.turn_id},
                )
            except CheckpointError as exc:
                self._notice(exc.message, ok=False)
            except Exception as exc:  # a checkpoint must never break the tool call
                log.exception("checkpoint of turn %s failed", self.turn_id)
                self._notice(f"checkpoint skipped: {type(exc).__name__}: {exc}", ok=False)

    async def finish(self) -> list[Change]:
        """Record how the turn left the files; return what it changed (empty: nothing)."""
        recorded, checkpoints = self.recorded, self.checkpoints
        if recorded is None or checkpoints is None:
            return []
        started = time.monotonic()
        try:
            done = await asyncio.to_thread(checkpoints.finish, recorded)
            changes = await asyncio.to_thread(checkpoints.turn_changes, done)
        except CheckpointError as exc:
            self._notice(exc.message, ok=False)
            return []
        except Exception:  # closing the checkpoint must never fail the turn
            log.exception("closing the checkpoint of turn %s failed", self.turn_id)
            return []
        log.debug("checkpoint of turn %s closed in %.3fs", self.turn_id, time.monotonic() - started)
        if changes:
            self.mark = {
                "checkpoint": recorded.id,
                "turn_id": self.turn_id,
                "files": [[c.status, c.path] for c in changes],
            }
            self._notice(
                f"this turn changed {len(changes)} file{'s' if len(changes) != 1 else ''}: "
                f"{describe_changes(changes)} — /undo restores them; /rewind lists checkpoints "
                "(d there shows a turn's diff)",
                data=dict(self.mark),
            )
        return changes

    def _notice(self, text: str, *, ok: bool = True, data: dict[str, Any] | None = None) -> None:
        self._emit(
            ev.CommandOutput(
                command=NOTICE_COMMAND, text=text, ok=ok, data=data or {}, role=self.role
            )
        )


# ---------------------------------------------------------------------- slash commands

REWIND_LIMIT = 50
"""Most checkpoints ``/rewind`` lists (newest first)."""


def project_checkpoints(data_dir: Path, project_root: Path, config: SmithConfig) -> Checkpoints:
    """The project's checkpoints for ``/undo`` and ``/rewind`` (even with recording off)."""
    return Checkpoints.for_project(data_dir, project_root, max_bytes=config.checkpoints.max_bytes)


class CheckpointHost(Protocol):
    """What :func:`runtime_checkpoints` reads of the runtime."""

    @property
    def config(self) -> EffectiveConfig: ...
    @property
    def store(self) -> Store: ...
    @property
    def options(self) -> Any: ...


def runtime_checkpoints(runtime: CheckpointHost) -> Checkpoints:
    """The checkpoints of the runtime's project (shadow repository beside its database)."""
    scope = getattr(runtime, "scope", None)
    root = scope.project_root if scope is not None else Path(runtime.options.cwd)
    data_dir = Path(runtime.store.path).parent
    return project_checkpoints(data_dir, root, runtime.config.model)


def turn_label(number: int | None, prompt: str) -> str:
    """How a person names a turn: ``turn 2 · ‘please fix the failing test’`` (its number in
    the conversation and the first words of its prompt; either may be unknown)."""
    words = visible(prompt).split()
    quoted = " ".join(words[:LABEL_WORDS]) + ("…" if len(words) > LABEL_WORDS else "")
    head = f"turn {number}" if number else "a turn"
    return f"{head} · ‘{quoted}’" if quoted else head


class TurnLabels:
    """:func:`turn_label` of stored turns, reading each conversation's messages once."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._turns: dict[str, dict[str, tuple[int, str]]] = {}

    def _of(self, conversation_id: str) -> dict[str, tuple[int, str]]:
        known = self._turns.get(conversation_id)
        if known is None:
            known = {}
            try:
                messages = self.store.conversations.list_messages(conversation_id)
            except Exception:
                log.warning("reading the turns of %s failed", conversation_id, exc_info=True)
                messages = []
            for message in messages:
                if message.role == "user" and message.turn_id and message.turn_id not in known:
                    known[message.turn_id] = (len(known) + 1, str(message.content or ""))
            self._turns[conversation_id] = known
        return known

    def label(self, conversation_id: str | None, turn_id: str | None, prompt: str = "") -> str:
        """The label of ``turn_id`` of ``conversation_id`` (``prompt``: its prompt when the
        messages no longer have it)."""
        number, stored = None, ""
        if conversation_id and turn_id:
            number, stored = self._of(conversation_id).get(turn_id, (None, ""))
        return turn_label(number, stored or prompt)

    def describe(
        self, conversation_id: str | None, turn_id: str | None, prompt: str, kind: str
    ) -> str:
        """What a checkpoint stands before: its turn's label, or its kind (a restore)."""
        if turn_id is None:
            return prompt or kind
        return self.label(conversation_id, turn_id, prompt)

    def of_checkpoint(self, item: Checkpoint) -> str:
        """:meth:`describe` of checkpoint ``item``."""
        return self.describe(item.conversation_id, item.turn_id, item.prompt, item.kind)


def undo(checkpoints: Checkpoints) -> Any:
    """Restore the files to before the last turn that changed them (``None``: nothing to
    undo); :func:`restored_text` says what was restored. Git work: call it off the loop."""
    return checkpoints.undo()


def undone_text(result: Any, labels: TurnLabels) -> tuple[str, dict[str, Any]]:
    """What ``/undo`` says about the :func:`undo` ``result`` (turns named by ``labels``)."""
    if result is None:
        return "nothing to undo: no checkpointed turn changed files in this project", {}
    return restored_text(result, labels), restored_data(result)


def label_entries(entries: list[dict[str, Any]], labels: TurnLabels) -> list[dict[str, Any]]:
    """``entries`` of :func:`rewind_entries` with each one's ``label`` (its turn's name)."""
    for entry in entries:
        entry["label"] = labels.describe(
            entry["conversation_id"], entry["turn_id"], entry["prompt"], entry["kind"]
        )
    return entries


def rewind_entries(checkpoints: Checkpoints) -> list[dict[str, Any]]:
    """The newest checkpoints, newest first: id, kind, turn, time, prompt, files changed
    (:func:`label_entries` adds each turn's name)."""
    items = checkpoints.list()[-REWIND_LIMIT:]
    current: str | None = None
    entries = []
    for item in reversed(items):
        after = item.after
        if after is None:
            current = current or checkpoints.snapshot()
            after = current
        changes = checkpoints.changes(item.before, after)
        entries.append(
            {
                "id": item.id,
                "kind": item.kind,
                "turn_id": item.turn_id,
                "conversation_id": item.conversation_id,
                "created_at": item.created_at,
                "prompt": item.prompt,
                "files": [[c.status, c.path] for c in changes],
                "before": item.before,
                "after": after,
            }
        )
    return entries


def rewind_text(entries: list[dict[str, Any]]) -> str:
    """``/rewind`` without an id: the list, one checkpoint a line."""
    if not entries:
        return "no checkpoints yet in this project"
    lines = ["checkpoints (newest first); /rewind ID restores the files to before that turn:"]
    for entry in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry["created_at"]))
        count = len(entry["files"])
        files = f"{count} file{'s' if count != 1 else ''}"
        label = entry.get("label") or entry["prompt"] or entry["kind"]
        lines.append(f"  {entry['id']}  {when}  {label}  ({files})")
    return "\n".join(lines)


def rewind(checkpoints: Checkpoints, checkpoint_id: str) -> tuple[Any, Checkpoint]:
    """Restore the files of checkpoint ``checkpoint_id`` (a unique prefix will do); the
    result and the checkpoint (:func:`restored_text` says what was restored)."""
    item = checkpoints.get(checkpoint_id)
    if item is None:
        raise CheckpointError(
            f"no checkpoint {checkpoint_id!r} in this project; /rewind lists them",
            code="unknown_checkpoint",
        )
    return checkpoints.restore(item), item


def restored_text(result: Any, labels: TurnLabels) -> str:
    """What a restore did, the turn named by ``labels``."""
    what = labels.of_checkpoint(result.checkpoint)
    if not result.changes:
        return f"the files already match the checkpoint before {what}; nothing to restore"
    count = len(result.changes)
    return (
        f"restored {count} file{'s' if count != 1 else ''} to before {what}: "
        f"{describe_changes(result.changes)}. /undo undoes this restore."
    )


def restored_data(result: Any) -> dict[str, Any]:
    """The data of a restore's command output: checkpoint ids and the files."""
    return {
        "checkpoint": result.checkpoint.id,
        "undo_checkpoint": result.undo.id,
        "files": [[c.status, c.path] for c in result.changes],
    }


def turn_diff(checkpoints: Checkpoints, checkpoint_id: str) -> str:
    """The combined diff of checkpoint ``checkpoint_id``'s turn: its files before the turn
    against how the turn left them (as the files are now while the turn is open)."""
    item = checkpoints.get(checkpoint_id)
    if item is None:
        raise CheckpointError(
            f"no checkpoint {checkpoint_id!r} in this project; /rewind lists them",
            code="unknown_checkpoint",
        )
    after = item.after if item.after is not None else checkpoints.snapshot()
    return checkpoints.diff(item.before, after)


def stored_marks(store: Store, conversation_id: str | None, turn_ids: list[str]) -> dict[str, Any]:
    """The file-change marks (``TurnCheckpoint.mark``) the records of ``turn_ids`` keep, by turn."""
    if not conversation_id:
        return {}
    marks: dict[str, Any] = {}
    try:
        records = store.notes.get_turn_records(conversation_id, turn_ids)
    except Exception:  # unreadable records only lose their marks
        log.warning("reading the records of %d turns failed", len(turn_ids), exc_info=True)
        return {}
    for turn_id, record in records.items():
        mark = record.get("checkpoint")
        if isinstance(mark, dict) and mark.get("checkpoint") and mark.get("files"):
            marks[turn_id] = mark
    return marks


def truncate_conversation(store: Any, conversation_id: str, turn_id: str) -> int:
    """Delete the conversation's messages from turn ``turn_id`` on; return how many went."""
    messages = store.conversations.list_messages(conversation_id)
    start = next((i for i, m in enumerate(messages) if m.turn_id == turn_id), None)
    if start is None:
        return 0
    with store.atomic():
        for message in messages[start:]:
            store.conversations.delete_message(message.id)
    return len(messages) - start
