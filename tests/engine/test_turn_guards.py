"""The turn's guards and its one Stop value (engine/turn/guards.py, engine/turn/stop.py)."""

from __future__ import annotations

from smith_tui.cancel import CancelToken
from smith_tui.engine.turn.guards import Cancellation, Guards, RepeatGuard, StepBudget
from smith_tui.engine.turn.stop import Stop
from smith_tui.llm import ToolCall
from smith_tui.tools.spec import ToolResult


def call(name: str = "read", arguments: str = '{"path": "a"}', id: str = "c1") -> ToolCall:
    return ToolCall(id=id, name=name, arguments=arguments)


def denied(c: ToolCall) -> ToolResult:
    return ToolResult(
        c.id, c.name, ok=False, content="no", metadata={"error_code": "permission_denied"}
    )


def test_each_stop_knows_its_reason_status_error_and_the_calls_it_did_not_run() -> None:
    assert (Stop.completed().reason, Stop.completed().status, Stop.completed().error) == (
        "completed",
        "idle",
        None,
    )
    cancelled = Stop.cancelled()
    assert (cancelled.reason, cancelled.status) == ("cancelled", "cancelled")
    skipped = cancelled.skipped(call())
    assert skipped.cancelled and not skipped.ok
    assert skipped.metadata == {"error_code": "cancelled"}
    steps = Stop.steps_used_up(3, child=True)
    assert (steps.reason, steps.status) == ("budget_exhausted", "error")
    assert steps.error is not None and "child_step_budget" in steps.error.message
    assert "/config set tool_step_budget" in str(Stop.steps_used_up(3, child=False).error)
    repeated = Stop.repeated("stopped: read was called 3 times")
    assert repeated.loop_detected == "stopped: read was called 3 times"
    # the call that tripped the guard says why; the ones after it say they were not run
    assert repeated.skipped(call(), tripped=True).error == "stopped: read was called 3 times"
    assert repeated.skipped(call()).error == "not run: the turn was stopped for repeating a call"
    result = ToolResult("c1", "report", ok=True, content="done")
    ended = Stop.ended_by(result)
    assert (ended.reason, ended.status, ended.terminal) == ("completed", "idle", result)
    assert ended.skipped(call()).metadata == {"error_code": "skipped"}


def test_the_guards_are_asked_in_order_and_the_step_budget_counts_admitted_calls() -> None:
    cancel = CancelToken.new_root()
    guards = Guards(Cancellation(cancel), StepBudget(2, child=False), RepeatGuard(None))
    assert guards.before_request() is None
    assert guards.admit(call(id="a")) is None
    assert guards.admit(call(arguments='{"path": "b"}', id="b")) is None
    stop = guards.admit(call(arguments='{"path": "c"}', id="c"))
    assert stop is not None and stop.reason == "budget_exhausted"
    cancel.cancel("test")
    first = guards.admit(call(id="d"))
    assert first is not None and first.reason == "cancelled"  # cancellation is asked first
    again = guards.before_request()
    assert again is not None and again.reason == "cancelled"


def test_the_repeat_guard_counts_a_run_of_calls_and_denials_asked_again() -> None:
    guard = RepeatGuard(3)
    same = call()
    assert guard.before_call(same) is None
    assert guard.before_call(call(arguments='{ "path" : "a" }')) is None  # same JSON value
    stop = guard.before_call(same)
    assert stop is not None
    assert stop.loop_detected == "stopped: read was called 3 times in a row with the same arguments"

    guard = RepeatGuard(3)
    other = call("bash", '{"command": "ls"}')
    for _ in range(2):
        assert guard.before_call(same) is None
        guard.finished(same, denied(same))
        assert guard.before_call(other) is None
    stop = guard.before_call(same)
    assert stop is not None
    assert stop.loop_detected == (
        "stopped: read was asked for again with the same arguments after 2 denials in this turn"
    )
