"""Building a dispatch job: validation errors, the dispatch edge, files, ids, cancel tokens."""

from __future__ import annotations

import re
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.dispatch.job import DispatchJob, build_job, child_prompt
from smith_tui.dispatch.result import ChildOutcome, dispatch_result
from smith_tui.engine.matrix import check_dispatch
from smith_tui.tools.spec import ToolError

CONTEXT = {"user_request_summary": "fix the parser", "role_instructions": "touch only parse.py"}


def make(args: dict[str, Any], *, parent_role: str = "orchestrator", cancel=None) -> DispatchJob:
    return build_job(
        args,
        parent_role=parent_role,
        parent_turn_id="turn-1",
        parent_cancel=cancel or CancelToken.new_root(),
        check_dispatch=check_dispatch,
    )


def args(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"target_role": "worker", "task": "fix it", "context": dict(CONTEXT)}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def test_a_valid_job() -> None:
    job = make(args(files=["src/b.py", "src/a.py", " src/b.py ", ""]))
    assert job.target_role == "worker"
    assert job.task == "fix it"
    assert job.user_request_summary == "fix the parser"
    assert job.role_instructions == "touch only parse.py"
    assert job.files == ("src/a.py", "src/b.py")
    assert job.parent_turn_id == "turn-1"
    assert re.fullmatch(r"job-[0-9a-f]{10}", job.job_id)
    assert ":" not in job.job_id
    assert not hasattr(job, "parent_role")
    assert make(args()).job_id != job.job_id


def test_the_cancel_token_derives_from_the_parent() -> None:
    parent = CancelToken.new_root()
    job = make(args(), cancel=parent)
    other = make(args(), cancel=parent)
    assert not job.cancel.is_cancelled()
    job.cancel.cancel("just this child")
    assert not parent.is_cancelled() and not other.cancel.is_cancelled()
    parent.cancel("user pressed ctrl+c")
    assert other.cancel.is_cancelled() and other.cancel.reason == "user pressed ctrl+c"


def test_aliases_and_case_are_accepted_for_the_target() -> None:
    assert make(args(target_role="Link")).target_role == "explorer"
    assert make(args(target_role=" WORKER ")).target_role == "worker"


@pytest.mark.parametrize("parent", ["worker", "explorer"])
def test_a_child_role_cannot_dispatch(parent: str) -> None:
    with pytest.raises(ToolError) as caught:
        make(args(), parent_role=parent)
    assert caught.value.code == "dispatch_denied"
    assert f"the {parent} role cannot dispatch sub-agents" in caught.value.message


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"target_role": None}, "`target_role` is required: one of worker, explorer"),
        ({"target_role": "  "}, "`target_role` is required"),
        ({"target_role": "wizard"}, "unknown `target_role` 'wizard'; use one of worker, explorer"),
        ({"target_role": "direct"}, "the orchestrator role may not dispatch to direct"),
        ({"target_role": "Tank"}, "may not dispatch to orchestrator"),
        ({"task": None}, "`task` must be a non-empty string"),
        ({"task": "  "}, "`task` must be a non-empty string"),
        ({"task": 3}, "`task` must be a non-empty string"),
        ({"context": None}, "`context` must be an object with user_request_summary"),
        ({"context": "the user wants X"}, "; got str"),
        ({"context": {}}, "`context.user_request_summary` must say"),
        ({"context": {"user_request_summary": 5}}, "`context.user_request_summary` must be a"),
        (
            {"context": {"user_request_summary": "x", "role_instructions": ["a"]}},
            "`context.role_instructions` must be a string, got list",
        ),
        ({"files": "a.py b.py", "model": ""}, "`model` must be a non-empty model id"),
        ({"files": [1, 2]}, "`files` must be a list of path strings"),
        ({"files": {"a": 1}}, "`files` must be a list of path strings"),
        ({"allow_raw_transcript": "maybe"}, "`allow_raw_transcript` must be true or false"),
    ],
)
def test_validation_errors_say_what_to_fix(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        make(args(**changes))
    assert message in caught.value.message
    assert caught.value.code in ("invalid_arguments", "dispatch_denied")


@pytest.mark.parametrize(
    "raw",
    [
        {"context": {**CONTEXT, "transcript": "user: hi\nassistant: hello"}},
        {"context": {**CONTEXT, "messages": [{"role": "user", "content": "hi"}]}},
        {"context": {**CONTEXT, "earlier": [{"role": "user", "content": "hi"}]}},
        {"history": [{"role": "user", "content": "hi"}]},
    ],
)
def test_a_raw_transcript_is_rejected_unless_flagged(raw: dict[str, Any]) -> None:
    with pytest.raises(ToolError) as caught:
        make(args(**raw))
    assert "a raw transcript was passed" in caught.value.message
    assert "allow_raw_transcript: true" in caught.value.message
    job = make(args(**raw, allow_raw_transcript=True))
    assert job.transcript and "hi" in job.transcript
    assert "# Conversation excerpt (from the parent)" in child_prompt(job)


def test_the_child_prompt_carries_task_context_and_files() -> None:
    job = make(args(files=["b.py", "a.py"]))
    prompt = child_prompt(job)
    assert prompt.index("# Task\nfix it") < prompt.index("# What the user asked for")
    assert "touch only parse.py" in prompt
    assert "- a.py\n- b.py" in prompt
    assert "call the `report` tool" in prompt
    assert "Conversation excerpt" not in prompt


@pytest.mark.parametrize(
    ("outcome", "summary"),
    [
        (ChildOutcome("completed", None, {}, text="All fixed!"), "stopped without calling report"),
        (ChildOutcome("budget_exhausted", None, {}), "used up its tool step budget"),
        (ChildOutcome("cancelled", None, {}), "was cancelled before it reported"),
        (ChildOutcome("error", None, {}, error="HTTP 500"), "failed before it reported"),
        (
            ChildOutcome(
                "error",
                None,
                {},
                loop="stopped: read was called 3 times in a row with the same arguments",
            ),
            "stopped for looping before it reported: read was called 3 times in a row",
        ),
    ],
)
def test_a_child_without_a_report_is_blocked(outcome: ChildOutcome, summary: str) -> None:
    job = make(args())
    result = dispatch_result(job, outcome)
    assert result["status"] == "blocked"
    assert summary in result["summary"]
    assert result["job_id"] == job.job_id and result["role"] == "worker"
    assert result["changes"] == [] and result["verification"] == []
    if outcome.text:
        assert "its last message: All fixed!" in result["summary"]
    if outcome.stop_reason == "cancelled":
        assert result["cancelled"] is True
    if outcome.error:
        assert result["error"] == "HTTP 500"


def test_a_result_keeps_the_report_and_adds_job_role_and_usage() -> None:
    job = make(args(target_role="explorer"))
    usage = {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
    report = {"status": "ok", "summary": "s", "findings": "f", "evidence": "e", "usage": {"x": 1}}
    result = dispatch_result(job, ChildOutcome("completed", report, usage))
    assert result == {
        "status": "ok",
        "summary": "s",
        "findings": ["f"],
        "evidence": ["e"],
        "job_id": job.job_id,
        "role": "explorer",
        "usage": usage,
    }
