"""The garbage-collection policy: what it freezes, when it collects, and how the app runs it."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from smith_tui.app import app as app_module
from smith_tui.app import gc_policy
from smith_tui.app.gc_policy import GcPolicy
from tests.app.app_harness import app_runtime, isolate_environment, make_app, running, wait_until


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Node:
    """An object that can sit in a reference cycle and be watched with a weakref."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def policy() -> Iterator[tuple[GcPolicy, Clock]]:
    clock = Clock()
    policy = GcPolicy(clock)
    try:
        yield policy, clock
    finally:
        policy.stop()
        assert gc.get_freeze_count() == 0


def test_start_freezes_the_heap_and_stop_gives_it_back(policy: tuple[GcPolicy, Clock]) -> None:
    p, _ = policy
    p.start()
    assert p.active
    assert gc.get_freeze_count() > 0
    assert p._on_collection in gc.callbacks
    p.stop()
    assert not p.active
    assert gc.get_freeze_count() == 0
    assert p._on_collection not in gc.callbacks


def test_garbage_frozen_at_start_is_freed_by_a_quiet_time_collection(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    node = Node()
    watch = weakref.ref(node)
    p.start()  # the cycle is alive now: frozen
    del node
    gc.collect()
    assert watch() is not None, "a frozen cycle is out of the collector's view"
    pile_up(gc_policy.THOROUGH_AFTER)  # the program did something since
    clock.now += gc_policy.QUIET_EVERY_S
    assert p.tick() == "thorough"
    assert watch() is None
    assert p.thorough_collections == 1
    assert gc.get_freeze_count() > 0  # survivors frozen again


def test_no_thorough_collection_while_the_user_is_busy_until_forced(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    pile_up(gc_policy.THOROUGH_AFTER)  # the program did something since
    started = clock.now
    for _ in range(int(gc_policy.FORCE_AFTER_S / gc_policy.CHECK_EVERY_S) - 1):
        clock.now += gc_policy.CHECK_EVERY_S
        p.input_seen()  # a key press every tick
        assert p.tick() != "thorough"
    clock.now = started + gc_policy.FORCE_AFTER_S
    p.input_seen()
    assert p.tick() == "thorough"


def test_quiet_input_but_too_soon_after_the_last_collection_waits(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    pile_up(gc_policy.THOROUGH_AFTER)  # the program did something since
    clock.now += gc_policy.QUIET_EVERY_S / 2
    assert not p.thorough_due()
    clock.now += gc_policy.QUIET_EVERY_S / 2
    assert p.thorough_due()
    p.input_seen()
    assert not p.thorough_due()
    clock.now += gc_policy.QUIET_S
    assert p.thorough_due()


def pile_up(collections: int) -> None:
    """Run ``collections`` collections of the middle generation (what counts towards a full
    one, as Python's own do while a program allocates)."""
    for _ in range(collections):
        gc.collect(1)


def test_start_takes_over_full_collections_and_stop_gives_them_back(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, _ = policy
    before = gc.get_threshold()
    p.start()
    assert gc.get_threshold()[:2] == before[:2]  # young collections stay Python's
    assert gc.get_threshold()[2] > 1_000_000  # no automatic full collection
    p.stop()
    assert gc.get_threshold() == before


def test_a_full_collection_waits_until_input_is_quiet_for_a_moment(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    node = Node()
    watch = weakref.ref(node)
    pile_up(2)  # the cycle is old now: only a full collection finds it
    del node
    pile_up(gc_policy.FULL_AFTER)
    assert watch() is not None, "Python ran no full collection by itself"
    p.input_seen()  # a key was just pressed: its frame comes first
    assert p.tick() == ""
    assert watch() is not None
    clock.now += 2 * gc_policy.IDLE_S
    assert p.tick() == "full"
    assert watch() is None
    assert p.full_collections == 1
    assert p.tick() == ""  # nothing piled up since


def test_a_full_collection_runs_anyway_when_input_never_pauses(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    pile_up(gc_policy.FULL_AFTER)
    for _ in range(3):
        clock.now += gc_policy.CHECK_EVERY_S
        p.input_seen()
        assert p.tick() == ""
    pile_up(gc_policy.FULL_AFTER_BUSY - gc_policy.FULL_AFTER)
    p.input_seen()
    assert p.tick() == "full"


def test_survivors_of_a_full_collection_are_frozen_at_most_every_few_seconds(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    frozen = gc.get_freeze_count()
    keep = [Node() for _ in range(100)]
    p.input_seen()
    assert p.tick() == ""  # no full collection yet: nothing to freeze
    pile_up(gc_policy.FULL_AFTER)
    clock.now += 2 * gc_policy.IDLE_S
    assert p.tick() == "full"  # too soon after the freeze at start to freeze again
    assert gc.get_freeze_count() == frozen
    # a short-lived object alive now is not frozen: it is freed as soon as it is garbage
    node = Node()
    watch = weakref.ref(node)
    clock.now += gc_policy.FREEZE_EVERY_S / 2
    pile_up(gc_policy.FULL_AFTER)
    assert p.tick() == "full"
    del node
    pile_up(gc_policy.FULL_AFTER)
    assert p.tick() == "full"
    assert watch() is None
    clock.now += gc_policy.FREEZE_EVERY_S / 2
    assert p.tick() == "freeze"  # the survivors of the last full collection
    assert gc.get_freeze_count() >= frozen + len(keep)
    assert p.tick() == ""  # nothing new since


def test_an_idle_app_walks_the_heap_only_after_it_did_something(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    pile_up(gc_policy.THOROUGH_AFTER - 1)  # a little work: a few young collections
    for _ in range(3):  # idle for minutes, input quiet: nothing to find, no walk
        clock.now += gc_policy.FORCE_AFTER_S
        assert p.tick() != "thorough"
    assert p.thorough_collections == 0
    node = Node()
    watch = weakref.ref(node)
    gc.freeze()  # frozen while alive, as the survivors of a full collection are
    del node
    pile_up(1)  # the work that dropped it
    assert p.tick() == "thorough"
    assert watch() is None
    clock.now += gc_policy.FORCE_AFTER_S
    assert p.tick() != "thorough"  # its own collection is no reason for another


def test_the_policy_does_nothing_before_start(policy: tuple[GcPolicy, Clock]) -> None:
    p, clock = policy
    clock.now += gc_policy.FORCE_AFTER_S * 2
    assert p.tick() == ""
    assert gc.get_freeze_count() == 0


async def test_the_app_runs_the_policy_while_it_runs(tmp_path: Path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path)
    # When the app started on the runtime, and whether the policy was running by then. (Not
    # "inactive once the panes are up": on a busy machine they can take longer than the
    # policy's delay.)
    started: list[tuple[float, bool]] = []
    start = app_module.SmithApp._start

    def recording_start(self: app_module.SmithApp) -> None:
        start(self)
        started.append((time.monotonic(), self.gc_policy.active))

    monkeypatch.setattr(app_module.SmithApp, "_start", recording_start)
    try:
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_until(pilot, lambda: app.gc_policy.active, what="the policy started")
            [(opened_at, active_then)] = started
            assert not active_then  # start-up settles first ...
            # ... for GC_POLICY_DELAY_S (the policy's clock is time.monotonic; Textual's timers
            # may fire half a millisecond early)
            assert app.gc_policy.last_thorough - opened_at >= app_module.GC_POLICY_DELAY_S - 0.01
            assert gc.get_freeze_count() > 0
            before = app.gc_policy.last_input
            await pilot.press("a")
            assert app.gc_policy.last_input > before
        assert not app.gc_policy.active
        assert gc.get_freeze_count() == 0
    finally:
        runtime.store.close()


def test_the_gc_policy_switch_is_on_by_default_and_checked(tmp_path: Path) -> None:
    from smith_tui.config.service_options import UIOptions

    assert UIOptions().gc_policy is True
    assert UIOptions.model_validate({"gc_policy": False}).gc_policy is False
    with pytest.raises(ValueError, match="gc_policy"):
        UIOptions.model_validate({"gc_policy": "sometimes"})


async def test_the_app_leaves_the_collector_alone_when_the_policy_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setattr(app_module, "GC_POLICY_DELAY_S", 0.05)
    runtime = app_runtime(tmp_path, config={"services": {"ui": {"gc_policy": False}}})
    try:
        assert runtime.config.model.services.ui.gc_policy is False
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_until(pilot, lambda: app.runtime_ready, what="the runtime")
            later: list[bool] = []
            # Timers fire in deadline order: this one comes after the policy's would have.
            app.set_timer(app_module.GC_POLICY_DELAY_S * 2, lambda: later.append(True))
            await wait_until(pilot, lambda: later, what="a timer after the policy's delay")
            assert not app.gc_policy.active
            assert gc.get_freeze_count() == 0
            assert pilot.app.gc_policy.tick() == ""  # ticks (none are scheduled) do nothing
    finally:
        runtime.store.close()
