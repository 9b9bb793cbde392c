"""The one-line status under the transcript: what the agent is doing, as whom, on which model."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from smith_tui.engine.presentation import role_label
from smith_tui.terminal_text import visible

if TYPE_CHECKING:
    # Imported where events are handled: the line paints in the first frame, before the
    # runtime (which loads the engine's events, ~12 ms) is open.
    from smith_tui.engine import events as ev

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: Statuses during which the spinner turns.
BUSY = frozenset({"thinking", "streaming", "tool"})
_MARKS = {"idle": "●", "error": "✗", "cancelled": "■", "paused": "‖"}
_STYLES = {
    "thinking": "bold $accent",
    "streaming": "bold $success",
    "tool": "bold $warning",
    "idle": "dim",
    "error": "bold $error",
    "cancelled": "bold $warning",
    "paused": "bold $warning",
}
_HELD_AT = {"request": "before the next request", "tools": "before the reply's tools"}
_FINISHED = {
    "completed": "idle",
    "cancelled": "cancelled",
    "error": "error",
    "budget_exhausted": "error",
}


class StatusLine(Widget):
    """Prompt status with a spinner, active role and model, conversation title and retries."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    status: reactive[str] = reactive("idle")
    """thinking, streaming, tool, idle, error, cancelled or paused (the turn holds at a
    round boundary: engine/turn_control.py)."""
    detail: reactive[str] = reactive("")
    """Extra words for the status (the running tool, the error)."""
    role: reactive[str] = reactive("direct")
    """The active top-level role."""
    model: reactive[str] = reactive("")
    """The model of the last request (or the configured one)."""
    title: reactive[str] = reactive("")
    """The conversation title."""
    retry: reactive[str] = reactive("")
    """``retrying in Ns (reason)`` while a retry waits, else empty."""
    frame: reactive[int] = reactive(0)
    """The spinner frame."""
    sandbox: reactive[str] = reactive("")
    """Whether bash commands run sandboxed (``sandboxed``, ``unsandboxed`` …); empty: not known."""
    sandbox_active: reactive[bool] = reactive(False)
    """Whether they do (a sandbox that is wanted but missing shows as a warning)."""
    mode: reactive[str] = reactive("")
    """The permission mode (``ask``, ``yolo`` …); empty: not known yet."""
    asking: reactive[str] = reactive("")
    """What a permission question open for the user is about (``bash``, ``edit (Niobe)``);
    empty when none is open. While one is, the line says it waits for the answer."""
    waited: reactive[str] = reactive("")
    """While the model is awaited or nothing has happened for :attr:`STALL_S` seconds: for
    how long, and how to interrupt; else empty."""

    STALL_S = 5.0
    """Seconds without any event of a running turn before the line says so."""
    SERVER_QUIET_S = 15.0
    """Seconds without data while the model is awaited before the line names the server and
    the stall timeout (sooner when half the stall timeout is less)."""
    INTERRUPT_HINT = "esc to interrupt"
    CANCEL_HINT = "esc to cancel"
    SERVER_QUIET_TEXT = "no data from the server for"
    ASKING_TEXT = "waiting for your answer"

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._retry_deadline: float | None = None
        self._retry_reason = ""
        self._retry_who = ""
        self.clock: Callable[[], float] = time.monotonic
        """Where the waiting time is read (tests move a manual clock)."""
        self._quiet_since: float | None = None
        self.stall_timeout_s: float | None = None
        """``llm_config.stream_stall_timeout`` in effect (``None``: not known yet)."""
        self._early = False

    def on_mount(self) -> None:
        """Start the spinner clock (paused while idle, never running with animations off)."""
        self._timer = self.set_interval(0.1, self._tick, pause=True)

    @property
    def animated(self) -> bool:
        """Whether the spinner and countdown move (off when the app disables animation)."""
        return self.app.animation_level != "none"

    def watch_status(self, status: str) -> None:
        """Run the spinner while busy."""
        timer = getattr(self, "_timer", None)
        if timer is None:
            return
        if status in BUSY and self.animated:
            timer.resume()
        else:
            timer.pause()

    def watch_asking(self, asking: str) -> None:
        """Once answered, time without output counts from the answer, not from the question."""
        if not asking:
            self._quiet_since = self.clock() if self.status in BUSY else None
        self.waited = self._wait_text()

    def _tick(self) -> None:
        self.frame = (self.frame + 1) % len(SPINNER_FRAMES)
        if self._retry_deadline is not None:
            self.retry = self._retry_text()
        self.waited = self._wait_text()

    def _wait_text(self) -> str:
        if self.asking or self.status not in BUSY or self._quiet_since is None:
            return ""
        quiet = self.clock() - self._quiet_since
        if self.status in ("thinking", "streaming") and quiet >= self._server_quiet_s():
            stall = self.stall_timeout_s
            limit = f" · stall timeout {stall:g} s" if stall is not None else ""
            return f"{self.SERVER_QUIET_TEXT} {int(quiet)} s{limit} · {self.CANCEL_HINT}"
        if self.status == "thinking" and quiet >= 1:
            return f"{int(quiet)}s · {self.INTERRUPT_HINT}"
        if quiet >= self.STALL_S:
            return f"no output for {int(quiet)}s · {self.INTERRUPT_HINT}"
        return ""

    def _server_quiet_s(self) -> float:
        stall = self.stall_timeout_s
        return self.SERVER_QUIET_S if stall is None else min(self.SERVER_QUIET_S, stall / 2)

    def show_early(self, mode: str, sandbox: str, sandbox_active: bool) -> None:
        """Show the mode and sandbox read before the runtime is open (``""``: not known;
        see :mod:`smith_tui.app.early_status`) until :meth:`show_session` replaces them."""
        self.mode, self.sandbox, self.sandbox_active = mode, sandbox, sandbox_active
        self._early = True

    def show_session(self, runtime: Any) -> None:
        """Fill in what the open runtime knows before its session starts, in one frame: the
        permission mode, the sandbox and the stall timeout (replacing what :meth:`show_early`
        showed). Events that say otherwise later win. The app probes bwrap in the thread that
        opens the runtime (see :func:`~smith_tui.engine.sandbox_status.warm_sandbox_probe`),
        so this reads the probe's cached answer; a runtime handed to the app open runs the
        probe here, once (a few milliseconds)."""
        timeouts = runtime.config.model.llm_config.transport_timeouts()
        self.stall_timeout_s = float(timeouts["stream_stall_timeout"])
        early, self._early = self._early, False
        if early or not self.mode:
            self.mode = runtime.permission_mode
        if early or not self.sandbox:
            # Imported here: the sandbox module is not part of the first frame.
            from smith_tui.engine.sandbox_status import sandbox_state_of

            state = sandbox_state_of(runtime.config.model)
            self.sandbox, self.sandbox_active = state.label(), state.active

    def _retry_text(self) -> str:
        remaining = max(0.0, (self._retry_deadline or 0.0) - time.monotonic())
        return f"{self._retry_who}retrying in {math.ceil(remaining)}s ({self._retry_reason})"

    def _clear_retry(self) -> None:
        self._retry_deadline = None
        self.retry = ""

    def handle_event(self, event: ev.Event) -> None:
        """Update from one engine event."""
        from smith_tui.engine import events as ev

        top = event.job_id is None
        if isinstance(event, ev.RetryScheduled):
            self._retry_deadline = time.monotonic() + event.delay_s
            self._retry_reason = event.reason
            self._retry_who = "" if top else f"{role_label(event.role)[0]}: "
            self.retry = self._retry_text()
            return
        if isinstance(event, ev.LLMRequestStarted | ev.TextDelta | ev.ReasoningDelta):
            if self._retry_deadline is not None:
                self._clear_retry()
        if not top:
            return
        self._apply(event)
        self._quiet_since = self.clock() if self.status in BUSY else None
        self.waited = self._wait_text()

    def _apply(self, event: ev.Event) -> None:
        from smith_tui.engine import events as ev

        if isinstance(event, ev.SandboxStatus):
            self.sandbox, self.sandbox_active = event.label, event.active
        elif isinstance(event, ev.PermissionMode):
            self.mode = event.mode
        elif isinstance(event, ev.StatusChanged):
            self.status, self.detail = event.status, event.detail
            if event.status not in ("thinking",):
                self._clear_retry()
        elif isinstance(event, ev.TurnPaused):
            self.status, self.detail = "paused", _HELD_AT.get(event.at, "")
        elif isinstance(event, ev.TurnResumed) and self.status == "paused":
            self.status, self.detail = "thinking", ""
        elif isinstance(event, ev.TurnStarted):
            self.status, self.detail = "thinking", ""
            self.role = event.role
        elif isinstance(event, ev.LLMRequestStarted):
            self.model = event.model
            self.role = event.role
        elif isinstance(event, ev.TurnFinished):
            self._clear_retry()
            self.status = _FINISHED.get(event.stop_reason, "idle")
            error = event.error or {}
            self.detail = str(error.get("message", "")) if self.status == "error" else ""
        elif isinstance(event, ev.ToolCallStarted):
            self.status, self.detail = "tool", event.name
        elif isinstance(event, ev.ConversationChanged) or (
            isinstance(event, ev.CommandOutput) and event.ok
        ):
            # The next thing that works replaces how the last turn ended.
            if self.status in ("error", "cancelled"):
                self.status, self.detail = "idle", ""

    def render(self) -> Content:
        """The status line text."""
        status = self.status
        if status in BUSY:
            mark = SPINNER_FRAMES[self.frame % len(SPINNER_FRAMES)]
        else:
            mark = _MARKS.get(status, "●")
        style = _STYLES.get(status, "")
        parts: list[str | tuple[str, str]] = [(f"{mark} {status}", style)]
        waited = self.waited
        if waited.startswith(self.SERVER_QUIET_TEXT):
            # Says more than "thinking", and must fit an 80-column line whole.
            parts, waited = [(f"{mark} {waited}", "bold $warning")], ""
        if self.asking:
            parts = [(f"? {self.ASKING_TEXT}: {visible(self.asking)}", "bold $warning")]
        elif self.detail:
            parts.append((f": {visible(self.detail)}", style))
        if self.retry:
            parts += ["  ", (visible(self.retry), "bold $warning")]
        if waited:
            parts += ["  ", (waited, "$text-muted")]
        parts += [("  │  ", "dim"), role_label(self.role)]
        if self.model:
            parts.append((f" · {visible(self.model)}", "dim"))
        if self.mode:
            style = "bold $warning" if self.mode == "yolo" else "dim"
            parts += [("  │  ", "dim"), (f"mode: {self.mode}", style)]
        if self.sandbox:
            warn = not self.sandbox_active and self.sandbox != "sandbox off"
            parts += [("  │  ", "dim"), (self.sandbox, "bold $warning" if warn else "dim")]
        if self.title:
            parts += [("  │  ", "dim"), (visible(self.title), "italic")]
        return Content.assemble(*parts)
