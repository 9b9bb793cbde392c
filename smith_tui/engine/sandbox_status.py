"""Tell the front ends whether ``bash`` commands run sandboxed (``SandboxStatus`` events)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from smith_tui.engine import events as ev
from smith_tui.tools.sandbox import (
    SandboxState,
    cached_sandbox_state,
    sandbox_settings,
    sandbox_state,
)
from smith_tui.tools.spec import ToolError


class SandboxReporter:
    """Emits a :class:`~smith_tui.engine.events.SandboxStatus` whenever the state changes.

    Each distinct notice (the sandbox is wanted but cannot be used) is given once
    per session; the state itself is sent again after every change so a status
    line can follow it.
    """

    def __init__(self, emit: Callable[[ev.Event], None]) -> None:
        self._emit = emit
        self._last: SandboxState | None = None
        self._noticed: set[str] = set()

    @property
    def state(self) -> SandboxState | None:
        """The state last reported (``None`` before the first report)."""
        return self._last

    def refresh(self, config: Mapping[str, Any]) -> None:
        """Work out the state under ``config`` (bwrap is probed once) and report a change."""
        try:
            state = sandbox_state(sandbox_settings(config))
        except ToolError:
            return  # an invalid table: the config loader reports it, and bash says so too
        if state == self._last:
            return
        self._last = state
        notice = state.notice()
        if notice in self._noticed:
            notice = ""
        elif notice:
            self._noticed.add(notice)
        self._emit(
            ev.SandboxStatus(
                mode=state.mode, active=state.active, label=state.label(), notice=notice
            )
        )


def sandbox_state_of(config: Mapping[str, Any]) -> SandboxState | None:
    """The sandbox state under ``config`` (its cached probe when bwrap was probed), or
    ``None`` for an invalid ``sandbox`` table (the session's own report explains it)."""
    try:
        settings = sandbox_settings(config)
    except ToolError:
        return None
    return cached_sandbox_state(settings) or sandbox_state(settings)


def warm_sandbox_probe(config: Mapping[str, Any]) -> None:
    """Probe bwrap for the settings of ``config`` (a runtime's effective config) now; call it
    off the event loop: the status line then shows the sandbox in the same frame as the
    permission mode."""
    sandbox_state_of(config)
