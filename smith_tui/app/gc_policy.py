"""When Python's cycle collector may pause the interface.

A full (generation 2) collection walks every tracked object. With a long conversation on
screen that is 100–160 ms, taken whenever the collector decides: allocation decides, so
mostly in the middle of the frame that answers a key. The policy keeps Python's young
collections as they are and takes over the full ones:

* after start-up the heap that exists then (modules, classes, the stylesheet, the loaded
  history…) is frozen out of the collector's view (`gc.freeze`);
* Python starts no full collection by itself; `tick` runs one when as much has piled up as
  would have started one (`FULL_AFTER` collections of the middle generation), once input
  has been quiet for `IDLE_S` (the key just pressed has been answered; the pause falls
  between keys), or at once when input never stops and `FULL_AFTER_BUSY` have piled up;
* what survived a full collection is frozen too, at most every `FREEZE_EVERY_S` seconds, so
  the next ones walk only objects created since. Not more often: everything alive at that
  instant is frozen, and much of it is short-lived (the widgets of the pages the user pages
  through, the parts of an answer about to be parked); once frozen, it stays in memory as
  garbage until a thorough collection (paging up 60 screens froze 16 times and held
  ~400,000 dead objects, 80 MB);
* frozen objects that later become garbage are found by a real full collection
  (`gc.unfreeze`, `gc.collect`, `gc.freeze`), run once input has been quiet for `QUIET_S`
  seconds (and `QUIET_EVERY_S` since the last one) if survivors were frozen since the last
  one, and at least every `FORCE_AFTER_S` seconds however busy the user is, so memory
  does not creep; but only once the program has done something since the last one
  (`THOROUGH_AFTER` collections of any generation, Python's or ours). An idle app drops no
  references to frozen objects, so one more would find nothing: it walked the whole heap
  every `QUIET_EVERY_S` for nothing (0.2–0.5 s at 100–160 MB, and a key pressed during one
  waited). Without a freeze since, what a walk can find is only what was alive at the last
  one and dropped since (a few thousand objects after paging through an answer: the
  placeholders replaced), which waits for the next turn's end or `FORCE_AFTER_S`;
* the end of a turn (`turn_ended`) makes the thorough collection of that turn's garbage due
  `QUIET_S` after the end (its last frames painted, the answer's parts parked: what the end
  drops is garbage by then) once input has been quiet as long, whatever was done since the
  last: the user is reading the answer, and the idle time that follows holds no walk of
  the heap (otherwise the one the turn made due came `QUIET_EVERY_S` after the last, in the
  first half minute of idle, and with it the full collection the turn had piled up).

`tick` needs to come every `CHECK_EVERY_S` only while a full collection is piling up or a
turn has just ended; otherwise (the policy is `settled`) what can become due is measured in
seconds, and the app ticks every `SETTLED_CHECK_EVERY_S` instead; input and engine events
start the quick ticks again.

After each thorough collection the C allocator is asked to give its free pages back to
the system (`release_free_memory`: glibc's ``malloc_trim``; nothing elsewhere). Freed
objects larger than Python's small-object allocator takes (strings of answers, the arrays
of lists and dicts) leave holes in glibc's heaps that it keeps: 20–25 MB of a 130 MB
process after 120 soak turns, growing in steps as the holes move, and one ``malloc_trim``
(2 ms) gave 14 MB back.

The app runs the policy unless ``services.ui.gc_policy`` is false (then Python's collector
works as it does by default).
"""

from __future__ import annotations

import functools
import gc
import sys
import time
from collections.abc import Callable
from typing import Any

#: Seconds without a key press or mouse event that count as "nobody is waiting".
QUIET_S = 1.0
#: Seconds between thorough collections when input is quiet.
QUIET_EVERY_S = 20.0
#: A thorough collection happens at least this often, even while the user is busy.
FORCE_AFTER_S = 60.0
#: Survivors of full collections are frozen at most this often (seconds): objects alive at
#: that instant but short-lived become garbage the collector no longer sees, so freezing
#: rarely keeps that trapped garbage small.
FREEZE_EVERY_S = 5.0
#: A full collection is due after this many collections of the middle generation (Python's
#: own default for starting one).
FULL_AFTER = 10
#: ... and runs once input has been quiet this long (seconds): the frame answering the key
#: is painted by then (at 0.05 s a collection often came before the paint while streaming).
IDLE_S = 0.1
#: ... or, while input never pauses, once this many have piled up.
FULL_AFTER_BUSY = 3 * FULL_AFTER
#: A thorough collection waits until this many collections (any generation) have run since
#: the last one: about 7,000 objects allocated and kept, the least work that can have
#: dropped a frozen object worth a walk of the whole heap.
THOROUGH_AFTER = 10
#: Python's threshold for starting a full collection while the policy runs: never.
_NO_AUTOMATIC_FULL = 1 << 30
#: How often the app calls `GcPolicy.tick` (seconds).
CHECK_EVERY_S = 0.1
#: How often the app calls `GcPolicy.tick` while the policy is `settled` (seconds).
SETTLED_CHECK_EVERY_S = 1.0


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS…)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: not worth its import before the first thorough collection

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Ask the C allocator to return its free pages to the system; False where it cannot
    (no ``malloc_trim``)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


class GcPolicy:
    """Schedules garbage collection for an interactive app.

    Call `start()` once the first screen is up, `input_seen()` on every key or mouse event,
    `turn_ended()` when a top-level turn ends, `tick()` every `CHECK_EVERY_S` seconds (or
    every `SETTLED_CHECK_EVERY_S` while it is `settled()`), and `stop()` when the app ends.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started = False
        self._survivors_waiting = False
        self._froze_since_thorough = False
        self._collections_since_thorough = 0
        self._thresholds = gc.get_threshold()
        self.last_input = 0.0
        self.last_thorough = 0.0
        self.last_freeze = 0.0
        self._turn_ended_at: float | None = None
        self.thorough_collections = 0
        """Thorough collections this policy ran."""
        self.full_collections = 0
        """Full collections (of what is not frozen) this policy ran."""
        self.freezes = 0
        """Times the survivors of a full collection were frozen."""
        self.memory_releases = 0
        """Times free memory was given back to the system after a thorough collection."""

    @property
    def active(self) -> bool:
        """Whether `start()` has run (and `stop()` has not)."""
        return self._started

    def start(self) -> None:
        """Freeze the start-up heap, take over full collections and follow the collector."""
        if self._started:
            return
        self._started = True
        gc.collect()
        gc.freeze()
        self._thresholds = gc.get_threshold()
        young, middle, _ = self._thresholds
        gc.set_threshold(young, middle, _NO_AUTOMATIC_FULL)
        gc.callbacks.append(self._on_collection)
        self._collections_since_thorough = 0
        self._froze_since_thorough = True  # the start-up heap: much of it is short-lived
        now = self._clock()
        self.last_input = now
        self.last_thorough = now
        self.last_freeze = now

    def stop(self) -> None:
        """Stop following the collector and give it back its thresholds and frozen objects."""
        if not self._started:
            return
        self._started = False
        if self._on_collection in gc.callbacks:
            gc.callbacks.remove(self._on_collection)
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()

    def input_seen(self) -> None:
        """Note a key press or mouse event (the user may be waiting on the screen)."""
        self.last_input = self._clock()

    def turn_ended(self) -> None:
        """Note that a top-level turn ended: its garbage is collected once its end is shown."""
        if self._started:
            self._turn_ended_at = self._clock()

    def settled(self) -> bool:
        """Whether `tick` may wait `SETTLED_CHECK_EVERY_S`: no full collection piling up
        (due `IDLE_S` after input) and no turn just ended (due `QUIET_S` after it); the rest
        becomes due seconds apart."""
        return not self._started or (self._turn_ended_at is None and gc.get_count()[2] < FULL_AFTER)

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        # May run in any thread, in the middle of anything: only note that it happened.
        if phase != "stop":
            return
        self._collections_since_thorough += 1
        if info.get("generation") == 2:
            self._survivors_waiting = True

    def thorough_due(self) -> bool:
        """Whether a thorough collection (frozen objects included) should run now."""
        if not self._started:
            return False
        now = self._clock()
        quiet = now - self.last_input >= QUIET_S
        ended = self._turn_ended_at is not None and now - self._turn_ended_at >= QUIET_S
        if ended:
            return quiet  # a turn always leaves garbage (its requests, deltas, old widgets)
        if self._collections_since_thorough < THOROUGH_AFTER:
            return False
        since = now - self.last_thorough
        if since >= FORCE_AFTER_S:
            return True
        return quiet and since >= QUIET_EVERY_S and self._froze_since_thorough

    def full_due(self) -> bool:
        """Whether a full collection of what is not frozen should run now."""
        if not self._started:
            return False
        piled = gc.get_count()[2]  # collections of the middle generation since the last full
        if piled >= FULL_AFTER_BUSY:
            return True
        return piled >= FULL_AFTER and self._clock() - self.last_input >= IDLE_S

    def tick(self) -> str:
        """Do what is due: ``"thorough"``, ``"full"``, ``"freeze"`` (a full collection, then
        its survivors frozen) or ``""`` (nothing)."""
        if not self._started:
            return ""
        if self.thorough_due():
            self._turn_ended_at = None
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self.memory_releases += release_free_memory()
            self._survivors_waiting = self._froze_since_thorough = False
            self._collections_since_thorough = 0  # its own collection is not activity
            self.last_thorough = self.last_freeze = self._clock()
            self.thorough_collections += 1
            return "thorough"
        done = ""
        if self.full_due():
            gc.collect()
            self.full_collections += 1
            done = "full"
        if self._survivors_waiting and self._clock() - self.last_freeze >= FREEZE_EVERY_S:
            self._survivors_waiting = False
            self._froze_since_thorough = True
            gc.freeze()
            self.last_freeze = self._clock()
            self.freezes += 1
            return "freeze"
        return done
