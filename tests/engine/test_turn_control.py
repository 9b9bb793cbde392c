"""TurnControl on its own (engine/turn_control.py): gates, steps, the tree, the clock."""

from __future__ import annotations

import asyncio
import time

from smith_tui.cancel import CancelToken
from smith_tui.engine.turn_control import TurnControl, wait_running


async def _held(control: TurnControl) -> None:
    while control.holding is None:
        await control.changed()


async def test_a_step_from_the_tools_gate_runs_the_tools_and_holds_at_the_next_request() -> None:
    control, cancel = TurnControl(), CancelToken.new_root()
    assert await control.gate("request", cancel) is None  # running: nothing holds
    control.pause()
    tools = asyncio.create_task(control.gate("tools", cancel))
    await _held(control)
    assert control.state == "paused" and control.holding == "tools"
    control.step()
    assert await tools == "stepped"
    request = asyncio.create_task(control.gate("request", cancel))
    await _held(control)  # the step was spent on the tools: the next request waits
    control.step()
    assert await request == "stepped"
    assert await control.gate("tools", cancel) is None  # the stepped round's tools go
    assert control.state == "pausing"  # and the round after it will hold


async def test_cancel_wakes_a_held_gate() -> None:
    control, cancel = TurnControl(), CancelToken.new_root()
    control.pause()
    gate = asyncio.create_task(control.gate("request", cancel))
    await _held(control)
    cancel.cancel("stop")
    assert await asyncio.wait_for(gate, 1) == "cancelled"
    assert control.holding is None


def test_pause_and_resume_cascade_and_a_new_child_of_a_paused_turn_starts_paused() -> None:
    top = TurnControl()
    first = top.child()
    top.pause()
    second = top.child()
    assert first.paused and second.paused
    first.resume()
    assert top.paused and not first.paused  # a child alone goes on
    top.resume()
    assert not any(c.paused for c in (top, first, second))
    second.pause()
    assert not top.paused and not first.paused  # a paused child leaves the rest running
    top.step()
    assert not second.paused  # a parent's step lets its sub-agents run its round


async def test_the_deadline_counts_running_time_only() -> None:
    control, cancel = TurnControl(), CancelToken.new_root()
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    finished = asyncio.get_running_loop().create_future()
    finished.set_result(None)
    assert await asyncio.wait_for(wait_running(finished, 60, control), 1)  # done: at once
    soon = asyncio.create_task(asyncio.sleep(0.01))
    assert await asyncio.wait_for(wait_running(soon, 60, control), 1)  # done later: at once

    control.pause()
    gate = asyncio.create_task(control.gate("request", cancel))
    await _held(control)
    waiting = asyncio.create_task(wait_running(never, 0.2, control))
    started = time.monotonic()
    await asyncio.wait({waiting}, timeout=0.5)  # well past the deadline, all of it stopped
    assert not waiting.done() and control.stopped_s() >= 0.5
    control.resume()
    assert await gate == "resumed"
    assert await asyncio.wait_for(waiting, 2) is False  # the 0.2 s of running time ran out
    assert time.monotonic() - started >= 0.7


async def test_a_parent_waiting_only_on_held_children_is_stopped_too() -> None:
    top, cancel = TurnControl(), CancelToken.new_root()
    child = top.child()
    assert not top.stopped
    child.pause()
    gate = asyncio.create_task(child.gate("request", cancel))
    await _held(child)
    assert top.stopped and not top.paused  # its round waits for a held sub-agent
    child.resume()
    await gate
    child.close()
    assert not top.stopped and repr(top) == "<TurnControl running children=0>"
