"""When Python's cycle collector may pause the interface.

A full (generation 2) collection walks every tracked object. With a long conversation on
screen that is 100–160 ms, taken whenever the collector decides, often in the middle of a
frame while the user presses a key. The policy keeps Python's collections but shrinks what a
full one has to walk:

* after start-up the heap that exists then (modules, classes, the stylesheet, the loaded
  history…) is frozen out of the collector's view (`gc.freeze`);
* after an automatic full collection, what survived it is frozen too (at the next tick
  when that collection took longer than `SLOW_FULL_S`, otherwise at most every
  `FREEZE_EVERY_S` seconds), so the next ones walk only objects created since — a pause
  proportional to recent work, not to the session;
* frozen objects that later become garbage are found by a real full collection
  (`gc.unfreeze`, `gc.collect`, `gc.freeze`), run once input has been quiet for `QUIET_S`
  seconds, and at least every `FORCE_AFTER_S` seconds however busy the user is, so memory
  does not creep.

The app runs the policy unless ``services.ui.gc_policy`` is false (then Python's collector
works as it does by default).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

#: Seconds without a key press or mouse event that count as "nobody is waiting".
QUIET_S = 1.0
#: Seconds between thorough collections when input is quiet.
QUIET_EVERY_S = 20.0
#: A thorough collection happens at least this often, even while the user is busy.
FORCE_AFTER_S = 60.0
#: Survivors of automatic full collections are frozen at most this often (seconds): objects
#: alive at that instant but short-lived become garbage the collector no longer sees, so
#: freezing rarely keeps that trapped garbage small.
FREEZE_EVERY_S = 5.0
#: An automatic full collection slower than this (seconds) has its survivors frozen at the
#: next tick, however recent the last freeze: the next one would be as slow.
SLOW_FULL_S = 0.03
#: How often the app calls `GcPolicy.tick` (seconds).
CHECK_EVERY_S = 0.5


class GcPolicy:
    """Schedules garbage collection for an interactive app.

    Call `start()` once the first screen is up, `input_seen()` on every key or mouse event,
    `tick()` every `CHECK_EVERY_S` seconds, and `stop()` when the app ends.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started = False
        self._survivors_waiting = False
        self._slow_full = False
        self._collection_started = 0.0
        self.last_input = 0.0
        self.last_thorough = 0.0
        self.last_freeze = 0.0
        self.thorough_collections = 0
        """Thorough collections this policy ran."""
        self.freezes = 0
        """Times the survivors of an automatic full collection were frozen."""

    @property
    def active(self) -> bool:
        """Whether `start()` has run (and `stop()` has not)."""
        return self._started

    def start(self) -> None:
        """Freeze the start-up heap and follow the collector."""
        if self._started:
            return
        self._started = True
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._on_collection)
        now = self._clock()
        self.last_input = now
        self.last_thorough = now
        self.last_freeze = now

    def stop(self) -> None:
        """Stop following the collector and give the frozen objects back to it."""
        if not self._started:
            return
        self._started = False
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)
        gc.unfreeze()

    def input_seen(self) -> None:
        """Note a key press or mouse event (the user may be waiting on the screen)."""
        self.last_input = self._clock()

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        # May run in any thread, in the middle of anything: only note that it happened.
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._collection_started = time.perf_counter()
            return
        self._survivors_waiting = True
        if time.perf_counter() - self._collection_started > SLOW_FULL_S:
            self._slow_full = True

    def thorough_due(self) -> bool:
        """Whether a thorough collection (frozen objects included) should run now."""
        if not self._started:
            return False
        now = self._clock()
        since = now - self.last_thorough
        if since >= FORCE_AFTER_S:
            return True
        return since >= QUIET_EVERY_S and now - self.last_input >= QUIET_S

    def tick(self) -> str:
        """Do what is due: ``"thorough"``, ``"freeze"`` or ``""`` (nothing)."""
        if not self._started:
            return ""
        if self.thorough_due():
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._survivors_waiting = self._slow_full = False
            self.last_thorough = self.last_freeze = self._clock()
            self.thorough_collections += 1
            return "thorough"
        waited = self._clock() - self.last_freeze
        if self._survivors_waiting and (self._slow_full or waited >= FREEZE_EVERY_S):
            self._survivors_waiting = self._slow_full = False
            gc.freeze()
            self.last_freeze = self._clock()
            self.freezes += 1
            return "freeze"
        return ""
