"""The rain animator: one write per tick at 10 fps, nothing after stop() but the delete.

The animator runs on a clock the tests move by hand, so tick counts are exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.widgets.rain.animator import RainAnimator
from smith_tui.widgets.rain.kitty import CellAnchor, KittyEncoder
from smith_tui.widgets.rain.layout import strip_layout
from tests.app.test_rain_kitty import outside_apc, parse_apc, shm_name
from tests.support.clock import ManualClock

SHM = Path("/dev/shm")


class FakeTerminal:
    """Collects every write with the time (on ``clock``) it happened."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.writes: list[str] = []
        self.times: list[float] = []

    def write(self, data: str) -> None:
        self.writes.append(data)
        self.times.append(self.clock())


def _animator(terminal: FakeTerminal, **kwargs: object) -> RainAnimator:
    layout = strip_layout(120, 10)
    kwargs.setdefault("encoder", KittyEncoder(medium="direct"))
    clock = terminal.clock
    return RainAnimator(terminal.write, layout, seed=5, clock=clock, sleep=clock.sleep, **kwargs)  # type: ignore[arg-type]


async def _ticks(clock: ManualClock, count: int, interval: float = 0.1) -> None:
    """Let the animator's task start, then move the clock on ``count`` ticks."""
    await clock.advance(0)
    for _ in range(count):
        await clock.advance(interval)


async def test_one_write_per_tick_at_ten_fps_and_only_the_delete_after_stop() -> None:
    clock = ManualClock()
    terminal = FakeTerminal(clock)
    rain = _animator(terminal)
    rain.start("#FFB000")
    assert rain.active
    await _ticks(clock, 6)
    frames = len(terminal.writes)
    rain.stop()
    assert not rain.active
    await clock.advance(0.35)
    await rain.wait_stopped()

    assert frames == 7  # the first at once, then one per tick
    assert rain.frames_written == frames
    for text in terminal.writes[:frames]:
        commands = parse_apc(text)
        assert commands[0][0]["a"] == "T"  # a whole frame in one write
        assert commands[-1][0].get("m", "0") == "0"
        assert outside_apc(text).startswith("\x1b7\x1b[11A\x1b[1G")
    intervals = [b - a for a, b in zip(terminal.times, terminal.times[1:frames], strict=False)]
    assert intervals == pytest.approx([0.1] * (frames - 1))
    assert clock.sleeps == pytest.approx([0.1] * frames)

    assert len(terminal.writes) == frames + 1
    [(keys, _)] = parse_apc(terminal.writes[-1])
    assert (keys["a"], keys["d"], keys["i"]) == ("d", "I", str(rain.encoder.image_id))


async def test_a_late_tick_drops_the_missed_frames_instead_of_bursting() -> None:
    clock = ManualClock()
    terminal = FakeTerminal(clock)
    rain = _animator(terminal)
    rain.start("#FFB000")
    await _ticks(clock, 1)
    assert len(terminal.writes) == 2
    await clock.advance(0.45)  # four ticks late
    # The late frame, then one more at once as the schedule restarts from now; not four.
    assert len(terminal.writes) == 4
    assert clock.sleeps[-2:] == pytest.approx([0.0, 0.1])
    await clock.advance(0.1)
    assert len(terminal.writes) == 5
    rain.stop()
    await clock.advance(0.1)
    await rain.wait_stopped()


async def test_stop_before_the_first_tick_draws_nothing() -> None:
    clock = ManualClock()
    terminal = FakeTerminal(clock)
    rain = _animator(terminal)
    rain.start("#00E5FF")
    rain.stop()
    await rain.wait_stopped()
    assert len(terminal.writes) == 1
    assert parse_apc(terminal.writes[0])[0][0]["a"] == "d"


async def test_stop_when_idle_writes_nothing() -> None:
    terminal = FakeTerminal(ManualClock())
    rain = _animator(terminal)
    rain.stop()
    assert terminal.writes == []


async def test_start_while_running_recolours_without_a_second_task() -> None:
    clock = ManualClock()
    terminal = FakeTerminal(clock)
    rain = _animator(terminal)
    rain.start("#FFB000")
    await _ticks(clock, 1)
    rain.start("#FF4FD8")
    assert rain.field is not None and rain.field.tint == (0xFF, 0x4F, 0xD8)
    await _ticks(clock, 5)
    assert clock.sleeping == 1  # one task, not two
    rain.stop()
    await clock.advance(0.1)
    await rain.wait_stopped()
    frames = len(terminal.writes) - 1
    assert frames == 7


async def test_restart_after_stop_leaves_the_old_task_silent() -> None:
    clock = ManualClock()
    terminal = FakeTerminal(clock)
    rain = _animator(terminal, anchor=CellAnchor(4, 2))
    rain.start("#FFB000")
    await clock.advance(0)
    rain.stop()
    rain.start("#00E5FF")
    await _ticks(clock, 4)
    assert clock.sleeping == 1  # the old task woke and left
    rain.stop()
    await clock.advance(0.2)
    await rain.wait_stopped()
    deletes = [i for i, text in enumerate(terminal.writes) if parse_apc(text)[0][0]["a"] == "d"]
    assert deletes == [1, len(terminal.writes) - 1]
    frames = len(terminal.writes) - 2
    assert frames == 6  # one before the restart, five after
    assert all(outside_apc(t).startswith("\x1b7\x1b[5;3H") for t in terminal.writes[2:-1])


async def test_a_failing_writer_stops_the_rain_quietly() -> None:
    calls = 0

    def broken(data: str) -> None:
        nonlocal calls
        calls += 1
        raise OSError("terminal went away")

    clock = ManualClock()
    rain = RainAnimator(
        broken,
        strip_layout(80, 6),
        encoder=KittyEncoder(medium="direct"),
        clock=clock,
        sleep=clock.sleep,
    )
    rain.start("#FFB000")
    await _ticks(clock, 3)
    await rain.wait_stopped()
    assert calls == 1
    assert not rain.active
    assert "terminal went away" in (rain.last_error or "")
    rain.stop()
    assert calls == 1


async def test_bad_tint_is_rejected_before_anything_runs() -> None:
    terminal = FakeTerminal(ManualClock())
    rain = _animator(terminal)
    with pytest.raises(ValueError, match="#RRGGBB"):
        rain.start("amber")
    assert not rain.active and terminal.writes == []


@pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm on this system")
async def test_shm_frames_leave_nothing_behind_after_stop() -> None:
    clock = ManualClock()
    terminal = FakeTerminal(clock)
    rain = _animator(terminal, encoder=KittyEncoder())
    rain.start("#FF4FD8")
    await _ticks(clock, 3)
    rain.stop()
    await clock.advance(0.1)
    await rain.wait_stopped()
    names = [shm_name(parse_apc(t)[0][1]) for t in terminal.writes[:-1]]
    assert names and all(parse_apc(t)[0][0]["t"] == "s" for t in terminal.writes[:-1])
    assert not any((SHM / name).exists() for name in names)


async def test_relayout_resizes_the_canvas_on_the_next_tick() -> None:
    clock = ManualClock()
    terminal = FakeTerminal(clock)
    rain = _animator(terminal)
    rain.start("#FFB000")
    await clock.advance(0)
    rain.relayout(strip_layout(60, 4, column=1))
    await clock.advance(0.1)
    rain.stop()
    await clock.advance(0.1)
    await rain.wait_stopped()
    last_frame = parse_apc(terminal.writes[-2])[0][0]
    assert (last_frame["c"], last_frame["r"], last_frame["s"], last_frame["v"]) == (
        "24",
        "4",
        str(12 * 6),
        str(4 * 8),
    )
    assert outside_apc(terminal.writes[-2]).startswith("\x1b7\x1b[5A\x1b[2G")
