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
from smith_tui.widgets.usage_pane import ContextBar
from tests.app.app_harness import (
    app_runtime,
    isolate_environment,
    make_app,
    running,
    submit,
    wait_until,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply


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


def test_the_end_of_a_turn_collects_its_garbage_once_the_end_is_shown(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    node = Node()
    watch = weakref.ref(node)
    gc.freeze()  # frozen while alive, as the survivors of a full collection are
    del node
    pile_up(gc_policy.THOROUGH_AFTER)  # the turn's work
    clock.now += 2 * gc_policy.QUIET_S  # long before QUIET_EVERY_S since the last one
    assert not p.thorough_due()
    p.turn_ended()
    assert not p.settled()
    assert p.tick() != "thorough"  # its last frames and the parking come first
    clock.now += gc_policy.QUIET_S / 2
    p.input_seen()  # the user pressed a key as the answer ended
    clock.now += gc_policy.QUIET_S / 2
    assert p.tick() != "thorough"  # ... so it waits for quiet input too
    assert watch() is not None
    clock.now += gc_policy.QUIET_S
    assert p.tick() == "thorough"
    assert watch() is None
    assert p.settled()
    clock.now += gc_policy.QUIET_EVERY_S  # idle afterwards: nothing left to walk for
    assert p.tick() != "thorough"
    assert p.thorough_collections == 1


def test_the_end_of_even_a_small_turn_walks_the_heap_once(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    pile_up(1)  # a turn that kept little: still its requests and widgets went
    p.turn_ended()
    clock.now += gc_policy.QUIET_S
    assert p.tick() == "thorough"
    assert p.settled()
    clock.now += gc_policy.FORCE_AFTER_S
    assert p.tick() != "thorough"  # nothing since: the end is no reason for another


def test_the_policy_needs_quick_ticks_only_while_something_is_due_soon(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    assert p.settled()  # not started: nothing to do
    p.start()
    assert p.settled()
    pile_up(gc_policy.FULL_AFTER)  # a full collection piles up: due IDLE_S after input
    assert not p.settled()
    clock.now += gc_policy.IDLE_S
    assert p.tick() == "full"
    assert p.settled()  # its survivors are frozen seconds later: a slow tick will do
    clock.now += gc_policy.FREEZE_EVERY_S
    assert p.tick() == "freeze"
    p.turn_ended()  # due QUIET_S after the end
    assert not p.settled()
    clock.now += gc_policy.QUIET_S
    assert p.tick() == "thorough"
    assert p.settled()


def test_quiet_time_walks_the_heap_only_after_survivors_were_frozen(
    policy: tuple[GcPolicy, Clock],
) -> None:
    p, clock = policy
    p.start()
    p.turn_ended()
    pile_up(gc_policy.THOROUGH_AFTER)
    clock.now += gc_policy.QUIET_S
    assert p.tick() == "thorough"  # the turn's garbage
    pile_up(gc_policy.THOROUGH_AFTER)  # the user pages a little: no full collection
    clock.now += gc_policy.QUIET_EVERY_S
    assert not p.thorough_due()  # nothing frozen since: little to find, it waits ...
    clock.now += gc_policy.FORCE_AFTER_S - gc_policy.QUIET_EVERY_S
    assert p.thorough_due()  # ... FORCE_AFTER_S at most
    assert p.tick() == "thorough"
    pile_up(gc_policy.FULL_AFTER)  # more work: a full collection, its survivors frozen
    clock.now += gc_policy.IDLE_S
    assert p.tick() == "full"
    clock.now += gc_policy.FREEZE_EVERY_S
    assert p.tick() == "freeze"
    clock.now += gc_policy.QUIET_EVERY_S - gc_policy.FREEZE_EVERY_S
    assert p.tick() == "thorough"  # frozen objects may have died since: quiet time walks


def test_a_thorough_collection_gives_free_memory_back_to_the_system(
    policy: tuple[GcPolicy, Clock],
) -> None:
    if not gc_policy.release_free_memory():
        pytest.skip("this C library has no malloc_trim")
    p, clock = policy
    p.start()
    # Holes glibc keeps: 16 KB blocks (its heap, not mmap) freed between small survivors.
    blocks = [(bytes(16_000), bytes(600)) for _ in range(3_000)]
    keep = [small for _, small in blocks]
    del blocks
    before = rss_anon_kb()
    pile_up(gc_policy.THOROUGH_AFTER)
    clock.now += gc_policy.FORCE_AFTER_S
    assert p.tick() == "thorough"
    assert p.memory_releases == 1
    assert before - rss_anon_kb() > 20_000, "about 47 MB of free holes; most of it back"
    assert len(keep) == 3_000


def rss_anon_kb() -> int:
    """This process's anonymous resident memory (kB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise AssertionError("no RssAnon in /proc/self/status")


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


async def test_the_app_collects_at_the_end_of_a_turn_and_stops_ticking_when_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: ScriptedLLMServer
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    monkeypatch.setattr(app_module, "GC_POLICY_DELAY_S", 0.05)
    # Only the end of the turn can make a thorough collection due in this test.
    monkeypatch.setattr(gc_policy, "QUIET_EVERY_S", 1e9)
    monkeypatch.setattr(gc_policy, "FORCE_AFTER_S", 1e9)
    runtime = app_runtime(tmp_path, llm_server.base_url)
    answer = "\n\n".join(f"Paragraph {i}: " + "words and more words " * 20 for i in range(30))
    llm_server.enqueue(text_reply(answer + "\n\nEND-OF-ANSWER"))
    try:
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_until(pilot, lambda: app.gc_policy.active, what="the policy started")
            policy = app.gc_policy
            ticks: list[float] = []
            ends: list[float] = []
            tick, turn_ended = policy.tick, policy.turn_ended

            def counted_tick() -> str:
                ticks.append(time.monotonic())
                return tick()

            def noted_end() -> None:
                ends.append(time.monotonic())
                turn_ended()

            monkeypatch.setattr(policy, "tick", counted_tick)
            monkeypatch.setattr(policy, "turn_ended", noted_end)
            before = policy.thorough_collections
            await submit(pilot, "tell me a long story")
            await wait_until(pilot, lambda: ends, what="the turn to end", within=30.0)
            await wait_until(
                pilot,
                lambda: policy.thorough_collections > before,
                what="the thorough collection the end of the turn made due",
                within=30.0,
            )
            assert policy.last_thorough - ends[0] >= gc_policy.QUIET_S - 0.01
            # What the panes do after the turn may pile up work again: let quiet time
            # collect it at once, so the policy settles.
            monkeypatch.setattr(gc_policy, "QUIET_EVERY_S", 0.0)
            await wait_until(pilot, policy.settled, what="the policy settled", within=30.0)
            # Settled, the quick ticks pause: a timer of five ticks' length sees at most the
            # one already under way and the settled policy's once a second.
            counted = len(ticks)
            later: list[bool] = []
            app.set_timer(5 * gc_policy.CHECK_EVERY_S, lambda: later.append(True))
            await wait_until(pilot, lambda: later, what="five ticks' time")
            assert len(ticks) <= counted + 2  # (or the settled one, every second)
            counted = len(ticks)
            await pilot.press("a")  # input starts them again
            await wait_until(pilot, lambda: len(ticks) > counted, what="ticks after a key")
    finally:
        runtime.store.close()


async def test_the_context_gauge_runs_no_timer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_environment(monkeypatch, tmp_path)
    runtime = app_runtime(tmp_path)
    updates: list[bool] = []
    update = ContextBar.update

    def counted_update(self: ContextBar, **changes: object) -> None:
        updates.append(bool(changes))
        update(self, **changes)  # type: ignore[arg-type]

    monkeypatch.setattr(ContextBar, "update", counted_update)
    try:
        app = make_app(runtime)
        async with running(app) as pilot:
            bar = app.main_screen.query_one(ContextBar)
            await wait_until(pilot, lambda: bar.percentage is not None, what="the gauge drawn")
            drawn = len(updates)
            later: list[bool] = []
            app.set_timer(1.5, lambda: later.append(True))  # Textual's bar ticks every 1 s
            await wait_until(pilot, lambda: later, what="a second and a half")
            assert len(updates) == drawn, "nothing changed, so nothing updated the gauge"
            assert "%" in str(bar.query_one("#percentage").render())
    finally:
        runtime.store.close()
