"""Tell the front ends whether ``bash`` commands run sandboxed (``SandboxStatus`` events)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from smith_tui.engine import events as ev
from smith_tui.tools.sandbox import SandboxState, cached_sandbox_state, sandbox_state

if TYPE_CHECKING:
    from smith_tui.config.schema import SmithConfig


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

    def refresh(self, config: SmithConfig) -> None:
        """Work out the state under ``config`` (bwrap is probed once) and report a change."""
        state = sandbox_state(config.sandbox)
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


def sandbox_state_of(config: SmithConfig) -> SandboxState:
    """The sandbox state under ``config`` (its cached probe when bwrap was probed)."""
    return cached_sandbox_state(config.sandbox) or sandbox_state(config.sandbox)


def warm_sandbox_probe(config: SmithConfig) -> None:
    """Probe bwrap for the settings of ``config`` (a runtime's typed config) now; call it
    off the event loop: the status line then shows the sandbox in the same frame as the
    permission mode."""
    sandbox_state_of(config)
