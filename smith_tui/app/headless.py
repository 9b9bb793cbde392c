"""The headless printer: an engine-event subscriber for ``smith -p``.

``text`` streams the answer to stdout and a line per tool call to stderr;
``json`` prints one object when the turn ends; ``stream-json`` prints every
event as one JSON line as it happens. What ``text`` prints passes through
:func:`~smith_tui.terminal_text.visible` (stdout is often a terminal); JSON escapes
control characters itself.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from smith_tui.engine import events as ev
from smith_tui.engine.presentation import key_argument
from smith_tui.terminal_text import visible


class HeadlessPrinter:
    """Prints engine events for one headless run."""

    def __init__(
        self, output_format: str, stdout: TextIO | None = None, stderr: TextIO | None = None
    ) -> None:
        self.format = output_format
        self.stdout = _Shown(stdout or sys.stdout)
        self.stderr = _Shown(stderr or sys.stderr)
        self._ends_with_newline = True
        self.finished: ev.TurnFinished | None = None
        self.denied: list[dict[str, Any]] = []
        """The tool calls the permission policy refused (tool, subject, reason, role)."""
        self.spend: dict[str, dict[str, float]] | None = None
        """The turn's last spend against each ``budget`` limit set (None: no limit set)."""
        self.plan: ev.PlanPresented | None = None
        """The plan a plan-mode turn presented (text: printed; json: the summary's ``plan``)."""

    def __call__(self, event: ev.Event) -> None:
        """Handle one event."""
        if isinstance(event, ev.PermissionDenied):
            self.denied.append(
                {
                    "tool": event.tool,
                    "subject": event.subject,
                    "reason": event.reason,
                    "role": event.role,
                }
            )
        if isinstance(event, ev.BudgetUpdated):
            self.spend = event.spend
        if isinstance(event, ev.PlanPresented):
            self.plan = event
        if self.format == "stream-json":
            self.stdout.write(json.dumps(event.to_dict(), default=str) + "\n")
            self.stdout.flush()
            if isinstance(event, ev.TurnFinished) and event.job_id is None:
                self.finished = event
            return
        if isinstance(event, ev.TurnFinished) and event.job_id is None:
            self.finished = event
            return
        if self.format != "text":
            return
        if isinstance(event, ev.TextDelta) and event.job_id is None:
            self.stdout.write(event.text)
            self.stdout.flush()
            self._ends_with_newline = event.text.endswith("\n")
        elif isinstance(event, ev.StreamReset) and event.job_id is None:
            self._newline()
            self.stderr.write(f"[{event.reason}: output above is discarded]\n")
        elif isinstance(event, ev.ToolCallStarted):
            self._newline()
            who = f"{event.role}/" if event.job_id else ""
            self.stderr.write(
                f"→ {who}{event.name} {_short(key_argument(event.name, event.arguments))}\n"
            )
        elif isinstance(event, ev.ToolCallFinished) and not event.ok:
            self.stderr.write(f"  ✗ {event.name}: {event.summary}\n")
        elif isinstance(event, ev.HookRun) and event.outcome != "ok":
            self._newline()
            why = f": {_short(event.message)}" if event.message else ""
            self.stderr.write(f"  hook {event.event} {event.outcome}{why}\n")
        elif isinstance(event, ev.RetryScheduled):
            self._newline()
            self.stderr.write(f"retrying in {event.delay_s:.1f}s ({event.reason})\n")
        elif isinstance(event, ev.PlanPresented):
            self._newline()
            self.stdout.write(event.text)
            self.stdout.flush()
            self._ends_with_newline = event.text.endswith("\n")
        elif isinstance(event, ev.ContextCompacted) and event.reason != "manual":
            self._newline()
            self.stderr.write(
                f"context compacted ({event.reason}): {event.summarised} older messages "
                f"summarised, the newest {event.kept} kept\n"
            )
        elif isinstance(event, ev.DispatchStarted):
            self._newline()
            self.stderr.write(f"⇢ dispatch {event.target_role}: {_short(event.task)}\n")
        elif isinstance(event, ev.DispatchFinished):
            self.stderr.write(f"⇠ {event.target_role} {event.status}: {_short(event.summary)}\n")
        elif isinstance(event, ev.BudgetWarning):
            self._newline()
            self.stderr.write(f"smith: warning: {event.message}\n")
        elif isinstance(event, ev.ScopeWarning):
            self._newline()
            self.stderr.write(f"smith: warning: {event.message}\n")
        elif isinstance(event, ev.CommandOutput) and event.command in ("attach", "setup"):
            self._newline()
            self.stderr.write(f"smith: {event.text}\n")

    def _newline(self) -> None:
        if not self._ends_with_newline:
            self.stdout.write("\n")
            self.stdout.flush()
            self._ends_with_newline = True

    def finish(self, summary: dict[str, Any]) -> None:
        """Print the closing output once the turn is over."""
        if self.format == "json":
            self.stdout.write(json.dumps(summary, default=str) + "\n")
        elif self.format == "text":
            self._newline()
        error = summary.get("error")
        if self.denied and self.format != "json":
            self._newline()
            calls = "call was" if len(self.denied) == 1 else "calls were"
            self.stderr.write(f"smith: {len(self.denied)} tool {calls} denied:\n")
            for item in self.denied:
                self.stderr.write(f"  {item['reason']}\n")
        if summary.get("stop_reason") != "completed" and self.format != "json":
            message = (error or {}).get("message") if isinstance(error, dict) else None
            self.stderr.write(
                f"smith: turn ended: {summary.get('stop_reason')}"
                + (f": {message}" if message else "")
                + "\n"
            )
        self.stdout.flush()


class _Shown:
    """A text stream whose writes show control characters instead of sending them."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` with its control characters made visible."""
        return self.stream.write(visible(text))

    def flush(self) -> None:
        """Flush the stream."""
        self.stream.flush()


def _short(text: str, limit: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
