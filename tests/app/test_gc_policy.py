"""The garbage-collection policy: what it freezes, when it collects, and how the app runs it."""

from __future__ import annotations

import gc
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
    for _ in range(int(gc_policy.FORCE_AFTER_S / gc_policy.CHECK_EVERY_S) - 1):
        clock.now += gc_policy.CHECK_EVERY_S
        p.input_seen()  # a key press every tick
        assert p.tick() != "thorough"
    clock.now += gc_policy.CHECK_EVERY_S
    p.input_seen()
    assert p.tick() == "thorough"


def test_quiet_input_but_too_soon_after_the_last_collection_waits(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    clock.now += gc_policy.QUIET_EVERY_S / 2
    assert not p.thorough_due()
    clock.now += gc_policy.QUIET_EVERY_S / 2
    assert p.thorough_due()
    p.input_seen()
    assert not p.thorough_due()
    clock.now += gc_policy.QUIET_S
    assert p.thorough_due()


def test_survivors_of_a_full_collection_are_frozen_at_most_every_few_seconds(
    policy: tuple[GcPolicy, Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gc_policy, "SLOW_FULL_S", 3600.0)  # no collection counts as slow
    p, clock = policy
    p.start()
    frozen = gc.get_freeze_count()
    keep = [Node() for _ in range(100)]
    p.input_seen()
    assert p.tick() == ""  # no full collection yet: nothing to freeze
    gc.collect()  # stands for an automatic full collection
    assert p.tick() == ""  # too soon after the freeze at start
    clock.now += gc_policy.FREEZE_EVERY_S
    p.input_seen()
    assert p.tick() == "freeze"
    assert gc.get_freeze_count() >= frozen + len(keep)
    assert p.tick() == ""  # nothing new since


def test_a_slow_full_collection_has_its_survivors_frozen_at_once(
    policy: tuple[GcPolicy, Clock], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gc_policy, "SLOW_FULL_S", -1.0)  # every collection counts as slow
    p, _ = policy
    p.start()
    p.input_seen()
    gc.collect()
    assert p.tick() == "freeze"
    assert p.freezes == 1


def test_the_policy_does_nothing_before_start(policy: tuple[GcPolicy, Clock]) -> None:
    p, clock = policy
    clock.now += gc_policy.FORCE_AFTER_S * 2
    assert p.tick() == ""
    assert gc.get_freeze_count() == 0


async def test_the_app_runs_the_policy_while_it_runs(tmp_path: Path, monkeypatch) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path)
    try:
        app = make_app(runtime)
        async with running(app) as pilot:
            assert not app.gc_policy.active  # start-up settles first
            await wait_until(pilot, lambda: app.gc_policy.active, what="the policy started")
            assert gc.get_freeze_count() > 0
            before = app.gc_policy.last_input
            await pilot.press("a")
            assert app.gc_policy.last_input > before
        assert not app.gc_policy.active
        assert gc.get_freeze_count() == 0
    finally:
        runtime.store.close()


def test_the_gc_policy_switch_is_on_by_default_and_checked(tmp_path: Path) -> None:
    from smith_tui.config.services import UIOptions

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
