"""Pause, step and resume of a running turn at its round boundaries: :class:`TurnControl`.

The contract:

- A turn's loop awaits :meth:`TurnControl.gate` at two points of every round: before it
  sends a request to the model (``"request"``, the round boundary) and before the tool
  calls of a reply start (``"tools"``). Nothing is ever interrupted: a stream in flight and
  tool calls already running finish; the turn holds at its next gate, so no new request
  and no new tool starts while it is paused.
- :meth:`pause` makes the turn hold at its next gate; :meth:`resume` lets it go on;
  :meth:`step` lets it run exactly one more round (from a hold before a request: that
  request and its tools; from a hold before tools: those tools) and hold again at the next
  round boundary. Steps add up: two steps are two rounds.
- Cancellation wins: a held gate returns at once when the turn's cancel token is
  cancelled, and the loop ends the turn as it ends any cancelled turn.
- Sub-agents: a dispatched child's turn gets :meth:`child`. Pausing or resuming a control
  does the same to every control below it (as cancelling does); a child created while its
  parent is paused starts paused. Pausing a child leaves its parent and siblings running.
  A step of a parent resumes the sub-agents below it: its round is theirs too.
- Clocks: a control is *stopped* while it holds at a gate, or while it has sub-agents
  and every one of them is stopped (its round is waiting for them). :meth:`stopped_s`
  is the total time it was stopped, and :func:`wait_running` waits for a task at most a
  given time *not counting* stopped time: a paused sub-agent does not run out its
  deadline.

Everything runs on one event loop; the module depends only on :mod:`smith_tui.cancel`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal

from smith_tui.cancel import CancelToken

Gate = Literal["request", "tools"]
"""Where a turn holds: before a model request (the round boundary) or before a reply's tools."""
GoneOn = Literal["resumed", "stepped", "cancelled"]
"""How a held turn went on."""
State = Literal["running", "pausing", "paused"]
"""``pausing``: paused, but a stream or tool is still finishing before the next gate."""


class TurnControl:
    """The pause / step / resume state of one turn (and, through :meth:`child`, its
    sub-agents'); see the module docstring for the contract."""

    def __init__(
        self, parent: TurnControl | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._parent = parent
        self._clock: Callable[[], float] = parent._clock if parent is not None else clock
        self._children: list[TurnControl] = []
        self._paused = False
        self._steps = 0
        self._stepping = False
        """The round in flight was let through by a step (its tools gate does not hold)."""
        self._holding: Gate | None = None
        self._wake: asyncio.Event | None = None
        self._stopped_since: float | None = None
        self._stopped_total = 0.0
        self._watchers: list[asyncio.Future[None]] = []
        if parent is not None:
            parent._children.append(self)
            self._paused = parent._paused and not parent._stepping
            parent._changed()

    # -- tree -----------------------------------------------------------------------------
    def child(self) -> TurnControl:
        """A control for a sub-agent's turn, below this one (close it when the turn ends)."""
        return TurnControl(self)

    def close(self) -> None:
        """Detach a finished sub-agent's control from its parent."""
        parent = self._parent
        if parent is not None and self in parent._children:
            parent._children.remove(self)
            parent._changed()

    def _subtree(self) -> Iterator[TurnControl]:
        yield self
        for child in list(self._children):
            yield from child._subtree()

    def _root(self) -> TurnControl:
        node = self
        while node._parent is not None:
            node = node._parent
        return node

    # -- commands -------------------------------------------------------------------------
    def pause(self) -> State:
        """Hold at the next gate (this turn and every sub-agent below it); returns the state."""
        for node in self._subtree():
            node._paused = True
            node._steps = 0
        self._changed()
        return self.state

    def resume(self) -> State:
        """Go on (this turn and every sub-agent below it); returns the state."""
        for node in self._subtree():
            node._paused = False
            node._steps = 0
            node._stepping = False
        self._changed()
        return self.state

    def step(self) -> State:
        """Run one more round, then hold at the next round boundary; returns the state."""
        for node in list(self._subtree())[1:]:
            node._paused = False
            node._steps = 0
            node._stepping = False
        self._paused = True
        self._steps += 1
        self._changed()
        return self.state

    # -- queries --------------------------------------------------------------------------
    @property
    def state(self) -> State:
        """``paused`` while it holds at a gate, ``pausing`` until it gets there, else
        ``running`` (also once a step or resume was given to a held gate)."""
        if not self._paused or self._steps:
            return "running"
        return "paused" if self._holding is not None else "pausing"

    @property
    def paused(self) -> bool:
        """Whether a pause is in effect (held, or holding at the next gate)."""
        return self._paused

    @property
    def holding(self) -> Gate | None:
        """The gate the turn holds at now, or ``None``."""
        return self._holding

    @property
    def stopped(self) -> bool:
        """Whether the control's clock is stopped now (see the module docstring)."""
        if self._holding is not None:
            return True
        return bool(self._children) and all(child.stopped for child in self._children)

    def stopped_s(self) -> float:
        """Seconds this control has been stopped, in total."""
        total = self._stopped_total
        if self._stopped_since is not None:
            total += self._clock() - self._stopped_since
        return total

    def changed(self) -> asyncio.Future[None]:
        """A future that completes at the next change of state anywhere in this tree."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watchers = [w for w in self._watchers if not w.done()]
        self._watchers.append(future)
        return future

    # -- the gate -------------------------------------------------------------------------
    async def gate(
        self, at: Gate, cancel: CancelToken, on_hold: Callable[[], None] | None = None
    ) -> GoneOn | None:
        """Hold here while paused; ``None`` when the gate did not hold, else how it went on.

        ``on_hold`` is called once when the gate starts holding (the loop reports it).
        """
        if at == "request":
            self._stepping = False  # a new round begins
        if not self._paused or (at == "tools" and self._stepping):
            return None
        if self._steps:
            self._take_step()
            return None
        self._holding = at
        self._changed()
        unsubscribe = cancel.on_cancel(lambda _reason: self._wake_up())
        try:
            if on_hold is not None:
                on_hold()
            while True:
                if cancel.is_cancelled():
                    return "cancelled"
                if not self._paused:
                    return "resumed"
                if self._steps:
                    self._take_step()
                    return "stepped"
                self._wake = asyncio.Event()
                await self._wake.wait()
        finally:
            unsubscribe()
            self._wake = None
            self._holding = None
            self._changed()

    def _take_step(self) -> None:
        self._steps -= 1
        self._stepping = True

    def _wake_up(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _changed(self) -> None:
        """Wake the held gates to look again, bring every clock of the tree up to date,
        tell the watchers."""
        now = self._clock()
        watchers: list[asyncio.Future[None]] = []
        for node in self._root()._subtree():
            node._wake_up()
            stopped = node.stopped
            if stopped and node._stopped_since is None:
                node._stopped_since = now
            elif not stopped and node._stopped_since is not None:
                node._stopped_total += now - node._stopped_since
                node._stopped_since = None
            watchers += node._watchers
            node._watchers = []
        for watcher in watchers:
            if not watcher.done():
                watcher.set_result(None)

    def __repr__(self) -> str:
        return f"<TurnControl {self.state} children={len(self._children)}>"


async def wait_running(task: asyncio.Future[Any], seconds: float, control: TurnControl) -> bool:
    """Wait for ``task`` at most ``seconds`` of time in which ``control`` was not stopped;
    return whether it finished (a paused sub-agent's deadline does not run out)."""
    start, stopped_before = control._clock(), control.stopped_s()
    while not task.done():
        used = control._clock() - start - (control.stopped_s() - stopped_before)
        left = seconds - used
        if left <= 0:
            return False
        changed = control.changed()
        try:
            await asyncio.wait(
                {task, changed},
                timeout=None if control.stopped else left,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            if not changed.done():
                changed.cancel()
    return True
