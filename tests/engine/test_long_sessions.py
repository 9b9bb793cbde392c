"""Long sessions (issue 12, part 2) over the scripted server: budgets, watchdogs, memory.

A real runtime, a real SQLite file and the scripted Chat-Completions server over HTTP:
``budget.*`` limits per turn and conversation (a sub-agent's spend counted toward its
parent's), the provider's reported cost stored and preferred over catalog prices, the
deadline of a dispatched child, the top-level repeat guard and step budget, project
notes listed in the system prompt, and ``@path`` attachments.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from smith_tui.config import DEFAULT_TOOL_STEP_BUDGET, check_config
from smith_tui.engine import events as ev
from smith_tui.engine.attachments import display_text
from smith_tui.engine.turn import TOP_REPEAT_LIMIT, TurnSettings
from tests.dispatch.support import (
    assert_transcript_valid,
    child_bodies,
    dispatch,
    parent_bodies,
    report,
    results,
    stored,
)
from tests.support.llm_script import replay_file
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime


def usage(prompt: int, completion: int = 0) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


def bash(command: str) -> Any:
    return tool_call("bash", {"command": command})


def system_prompts(server: ScriptedLLMServer) -> list[str]:
    return [body["messages"][0]["content"] for body in server.chat_requests()]


def last_user(body: dict[str, Any]) -> str:
    """The newest user message of a request before the state snapshot."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return users[-2]


# -- budgets --------------------------------------------------------------------------------


async def test_turn_tokens_warn_at_80_percent_then_stop_before_the_next_request(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[bash("echo one")], usage=usage(500)),
        text_reply(tool_calls=[bash("echo two")], usage=usage(300, 50)),
        text_reply(tool_calls=[bash("echo three")], usage=usage(200)),
        text_reply("never sent"),
    )
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"budget": {"turn_tokens": 1000}}
    )
    result = await runtime.run_turn("count")

    assert result.stop_reason == "budget_exhausted"
    assert result.error is not None and result.error.code == "budget_exhausted"
    message = result.error.message
    assert "turn tokens budget is used up: 1,050 tokens of 1,000 tokens" in message
    assert "budget.turn_tokens" in message and "--max-tokens" in message
    assert len(llm_server.chat_requests()) == 3  # stopped before the fourth request
    assert llm_server.pending == 1

    # One warning, when the second call crossed 80% (850 of 1000).
    (warning,) = rec.of(ev.BudgetWarning)
    assert warning.limit == "turn_tokens" and warning.used == 850 and warning.maximum == 1000
    assert "85% of the turn tokens budget" in warning.message
    spends = [e.spend["turn_tokens"]["used"] for e in rec.of(ev.BudgetUpdated)]
    assert spends == [500, 850, 1050]
    finished = rec.of(ev.TurnFinished)[-1]
    assert finished.stop_reason == "budget_exhausted"
    # Every call that ran has its result on record; the turn is closed as failed.
    assert_transcript_valid(stored(runtime))
    turn = runtime.store.turns.get(result_turn_id(rec))
    assert turn is not None and turn.stop_reason == "budget_exhausted"
    await runtime.aclose()


def result_turn_id(rec: Any) -> str:
    return next(e.turn_id for e in rec.of(ev.TurnStarted) if e.job_id is None)


async def test_without_limits_nothing_is_metered(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("done", usage=usage(10_000_000)))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("hi")
    assert result.stop_reason == "completed"
    assert not rec.of(ev.BudgetUpdated) and not rec.of(ev.BudgetWarning)
    await runtime.aclose()


async def test_a_childs_spend_counts_toward_its_parents_turn_budget(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "read a lot")], usage=usage(100)),
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})], usage=usage(500)),
        text_reply(tool_calls=[bash("echo more")], usage=usage(400)),
        text_reply(tool_calls=[report(status="ok", summary="never")]),
        text_reply("never sent either"),
    )
    runtime, rec = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"active_role": "orchestrator", "budget": {"turn_tokens": 1000}},
    )
    result = await runtime.run_turn("go")

    # Parent 100 + child 500 + child 400 = the limit: the child stops before its third
    # request, then the parent before its second.
    assert len(child_bodies(llm_server)) == 2
    assert len(parent_bodies(llm_server)) == 1
    assert result.stop_reason == "budget_exhausted"
    assert "turn tokens budget is used up: 1,000 tokens" in result.error.message

    # From 60% straight to the limit: the warning still comes, once, before the stop.
    job_id = next(e.job_id for e in rec.of(ev.DispatchStarted))
    (warning,) = rec.of(ev.BudgetWarning)
    assert warning.limit == "turn_tokens" and warning.used == 1000 and warning.job_id == job_id
    assert warning.message == (
        "100% of the turn tokens budget used (1,000 tokens of 1,000 tokens, "
        "budget.turn_tokens); the limit is reached: no further request in this turn"
    )
    order = [type(e) for e in rec.events if isinstance(e, ev.BudgetWarning | ev.TurnFinished)]
    assert order[0] is ev.BudgetWarning
    updates = rec.of(ev.BudgetUpdated)
    assert [(e.job_id, e.spend["turn_tokens"]["used"]) for e in updates] == [
        (None, 100),
        (job_id, 600),
        (job_id, 1000),
    ]
    (res,) = results(runtime)
    assert res["status"] == "blocked"
    assert "budget.turn_tokens" in res["summary"]
    child_finished = next(e for e in rec.of(ev.TurnFinished) if e.job_id == job_id)
    assert child_finished.stop_reason == "budget_exhausted"
    await runtime.aclose()


async def test_the_warning_is_raised_by_the_child_that_crossed_80_percent(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "read")], usage=usage(100)),
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})], usage=usage(750)),
        text_reply(tool_calls=[report(status="ok", summary="read it")], usage=usage(50)),
        text_reply("done", usage=usage(50)),
    )
    runtime, rec = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"active_role": "orchestrator", "budget": {"turn_tokens": 1000}},
    )
    result = await runtime.run_turn("go")
    assert result.stop_reason == "completed"
    (warning,) = rec.of(ev.BudgetWarning)
    job_id = next(e.job_id for e in rec.of(ev.DispatchStarted))
    assert warning.job_id == job_id and warning.used == 850
    assert rec.of(ev.BudgetUpdated)[-1].spend["turn_tokens"]["used"] == 950
    await runtime.aclose()


async def test_conversation_tokens_carry_over_turns_and_stop_the_first_request(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("first", usage=usage(900, 100)), text_reply("never"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"budget": {"conversation_tokens": 1000}}
    )
    first = await runtime.run_turn("one")
    assert first.stop_reason == "completed"
    # One call from nothing to the limit still warns (once), naming the conversation.
    (warning,) = rec.of(ev.BudgetWarning)
    assert warning.message.endswith(
        "(1,000 tokens of 1,000 tokens, budget.conversation_tokens); the limit is reached: "
        "no further request in this conversation"
    )
    second = await runtime.run_turn("two")
    assert second.stop_reason == "budget_exhausted"
    assert "conversation tokens budget is used up: 1,000 tokens" in second.error.message
    assert "/new" in second.error.message
    assert len(llm_server.chat_requests()) == 1

    # A new conversation starts from nothing.
    runtime.conversations.new()
    third = await runtime.run_turn("three")
    assert third.stop_reason == "completed" and third.text == "never"
    await runtime.aclose()


OPENROUTER_CATALOG = {
    "data": [
        {
            "id": "scripted-model",
            "context_length": 200_000,
            "pricing": {"prompt": "0.001", "completion": "0.002"},
        }
    ]
}


async def test_reported_cost_is_stored_and_preferred_over_catalog_prices(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.catalog = OPENROUTER_CATALOG
    # OpenRouter's recording reports usage.cost 0.000669 for 43 + 36 tokens; the catalog's
    # prices would make that 43 * 0.001 + 36 * 0.002 = 0.115.
    llm_server.enqueue(
        replay_file("04_openrouter_claude-sonnet-4.5_reasoning_heartbeats.sse"),
        text_reply("priced by the catalog", usage=usage(100, 10)),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    assert (await runtime.run_turn("one")).stop_reason == "completed"
    assert (await runtime.run_turn("two")).stop_reason == "completed"

    rows = runtime.store.usage.list_for_conversation(runtime.conversations.conversation_id)
    assert [r.cost for r in rows] == [pytest.approx(0.000669), pytest.approx(0.12)]
    assert [e.cost for e in rec.of(ev.UsageUpdated)] == [
        pytest.approx(0.000669),
        pytest.approx(0.12),
    ]
    totals = runtime.store.usage.totals_by_role(runtime.conversations.conversation_id)
    assert totals["direct"].cost == pytest.approx(0.120669)
    await runtime.aclose()


async def test_turn_cost_limit_stops_the_turn(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.catalog = OPENROUTER_CATALOG
    llm_server.enqueue(
        text_reply(tool_calls=[bash("echo a")], usage=usage(40)),  # $0.04
        text_reply(tool_calls=[bash("echo b")], usage=usage(45)),  # $0.085: 85%
        text_reply(tool_calls=[bash("echo c")], usage=usage(20)),  # $0.105
        text_reply("never"),
    )
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"budget": {"turn_cost_usd": 0.1}}
    )
    result = await runtime.run_turn("spend")
    assert result.stop_reason == "budget_exhausted"
    assert "turn cost budget is used up: $0.10 of $0.10 (budget.turn_cost_usd)" in (
        result.error.message
    )
    assert "--max-cost" in result.error.message
    assert len(llm_server.chat_requests()) == 3
    (warning,) = rec.of(ev.BudgetWarning)
    assert warning.limit == "turn_cost_usd" and warning.used == pytest.approx(0.085)
    await runtime.aclose()


async def test_budget_limits_can_be_set_with_config_set(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    out = await runtime.submit("/config set budget.turn_tokens 5000")
    assert out.ok, out.text
    assert runtime.config.effective["budget"]["turn_tokens"] == 5000
    bad = await runtime.submit("/config set budget.turn_cost_usd -2")
    assert not bad.ok and "greater than 0" in bad.text
    await runtime.aclose()


# -- watchdogs --------------------------------------------------------------------------------


async def test_a_child_past_its_deadline_is_cancelled_and_reports_blocked(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "take forever")]),
        text_reply(tool_calls=[report(status="ok", summary="too late")], delay_s=30),
        text_reply("The worker timed out."),
    )
    runtime, rec = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={
            "active_role": "orchestrator",
            "services": {"dispatch": {"child_timeout_s": 0.5}},
        },
    )
    result = await runtime.run_turn("go")
    assert result.stop_reason == "completed"
    assert result.text == "The worker timed out."
    (res,) = results(runtime)
    assert res["status"] == "blocked"
    assert "deadline of 0.5 s (services.dispatch.child_timeout_s)" in res["summary"]
    job_id = res["job_id"]
    child = next(e for e in rec.of(ev.TurnFinished) if e.job_id == job_id)
    assert child.stop_reason == "cancelled"
    assert_transcript_valid(stored(runtime))
    await runtime.aclose()


def test_top_level_turns_get_a_step_budget_and_repeat_guard_by_default() -> None:
    settings = TurnSettings.from_config(check_config({}))
    assert settings.step_budget == DEFAULT_TOOL_STEP_BUDGET == 200
    assert settings.repeat_limit == TOP_REPEAT_LIMIT
    assert TurnSettings.from_config(check_config({"tool_step_budget": 7})).step_budget == 7


async def test_the_repeat_guard_stops_a_top_level_turn(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        *(text_reply(tool_calls=[bash("echo same")]) for _ in range(TOP_REPEAT_LIMIT)),
        text_reply("never"),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    result = await runtime.run_turn("loop")
    assert result.stop_reason == "error"
    assert result.error.code == "repeated_tool_call"
    assert f"bash was called {TOP_REPEAT_LIMIT} times in a row" in result.error.message
    ran = [e for e in rec.of(ev.ToolCallFinished) if e.ok]
    assert len(ran) == TOP_REPEAT_LIMIT - 1
    assert len(llm_server.chat_requests()) == TOP_REPEAT_LIMIT
    assert_transcript_valid(stored(runtime))
    await runtime.aclose()


async def test_the_step_budget_message_says_how_to_raise_it(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[bash("echo 1")]),
        text_reply(tool_calls=[bash("echo 2")]),
        text_reply(tool_calls=[bash("echo 3")]),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config={"tool_step_budget": 2})
    result = await runtime.run_turn("steps")
    assert result.stop_reason == "budget_exhausted"
    assert "tool step budget (2) is used up" in result.error.message
    assert "/config set tool_step_budget N" in result.error.message
    await runtime.aclose()


# -- memory in context ---------------------------------------------------------------------


async def test_project_notes_are_listed_by_id_in_a_stable_system_prompt(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("note", {"action": "upsert", "id": "new-note", "content": "NEW-BODY"})
            ]
        ),
        text_reply("noted"),
        text_reply("again"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    runtime.store.project_memory.put(runtime.project_id, "deploy-steps", "SECRET-BODY\nmore")
    runtime.store.project_memory.put(runtime.project_id, "arch/overview", "layers")
    assert (await runtime.run_turn("work")).stop_reason == "completed"
    assert (await runtime.run_turn("more")).stop_reason == "completed"

    first, second, third = system_prompts(llm_server)
    assert first == second  # byte-stable within the turn, though a note was added in it
    assert "## Project notes" in first
    assert "- arch/overview\n- deploy-steps" in first
    assert "SECRET-BODY" not in first and "new-note" not in first
    assert "- new-note" in third  # the next turn lists it
    await runtime.aclose()


def test_the_notes_block_is_bounded() -> None:
    from smith_tui.engine.prompt import MAX_NOTE_TITLES, project_notes

    block = project_notes([f"note-{i:03d}" for i in range(500)])
    assert block.count("\n- note-") <= MAX_NOTE_TITLES
    assert block.endswith('more (note(action="list") lists them all)')
    assert project_notes([]) == ""


async def test_children_get_no_notes_block(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "x")]),
        text_reply(tool_calls=[report(status="ok", summary="done")]),
        text_reply("ok"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config={"active_role": "orchestrator"})
    runtime.store.project_memory.put(runtime.project_id, "some-note", "x")
    await runtime.run_turn("go")
    (child,) = child_bodies(llm_server)
    assert "## Project notes" not in child["messages"][0]["content"]
    assert "- some-note" in parent_bodies(llm_server)[0]["messages"][0]["content"]
    await runtime.aclose()


# -- @path attachments ------------------------------------------------------------------------


async def test_an_at_path_attaches_the_file(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(text_reply("it says hello"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    repo = runtime.options.cwd
    (repo / "src").mkdir()
    (repo / "src" / "hello.py").write_text("print('hello')\nprint('world')\n")
    result = await runtime.run_turn("what does @src/hello.py print?")
    assert result.stop_reason == "completed"

    (body,) = llm_server.chat_requests()
    sent = last_user(body)
    assert sent.startswith("what does @src/hello.py print?\n\n[attached file: src/hello.py]\n")
    assert "print('hello')\nprint('world')" in sent

    (started,) = rec.of(ev.TurnStarted)
    assert started.prompt == "what does @src/hello.py print?"
    assert started.attachments == [{"path": "src/hello.py", "lines": 2, "chars": 30, "cut": False}]
    user = next(m for m in stored(runtime) if m.role == "user")
    assert user.content == sent
    assert user.metadata["prompt"] == "what does @src/hello.py print?"
    # What the transcript shows: the prompt and a marker, not the file.
    shown = display_text(user.content, user.metadata)
    assert shown == "what does @src/hello.py print?\n📎 src/hello.py (2 lines)"
    assert not [e for e in rec.of(ev.CommandOutput) if e.command == "attach"]
    await runtime.aclose()


async def test_a_big_attachment_is_cut_to_the_read_tools_output_cap(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("big"))
    runtime, rec = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"services": {"tool": {"read": {"max_output_chars": 1000}}}},
    )
    (runtime.options.cwd / "big.txt").write_text("line of text\n" * 500)
    await runtime.run_turn("look at @big.txt")
    (started,) = rec.of(ev.TurnStarted)
    (attachment,) = started.attachments
    assert attachment["cut"] is True and attachment["chars"] == 1000
    sent = last_user(llm_server.chat_requests()[0])
    assert "[cut: only the first 1,000 characters are attached]" in sent
    assert len(sent) < 1200
    await runtime.aclose()


@pytest.mark.parametrize(
    ("make", "token", "why"),
    [
        (lambda repo, tmp: None, "@missing.txt", "file not found"),
        (
            lambda repo, tmp: (tmp / "outside.txt").write_text("x"),
            "@../outside.txt",
            "is outside the project root",
        ),
        (lambda repo, tmp: os.mkfifo(repo / "pipe"), "@pipe", "FIFO"),
    ],
    ids=["missing", "outside-project", "fifo"],
)
async def test_an_at_path_that_fails_gives_a_notice_and_the_prompt_still_goes(
    tmp_path: Path, llm_server: ScriptedLLMServer, make: Any, token: str, why: str
) -> None:
    llm_server.enqueue(text_reply("answered anyway"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    make(runtime.options.cwd, tmp_path)
    prompt = f"please check {token}"
    result = await runtime.run_turn(prompt)
    assert result.stop_reason == "completed"
    assert last_user(llm_server.chat_requests()[0]) == prompt
    (notice,) = [e for e in rec.of(ev.CommandOutput) if e.command == "attach"]
    assert not notice.ok
    assert notice.text.startswith(f"{token}: not attached") and why in notice.text
    user = next(m for m in stored(runtime) if m.role == "user")
    assert user.content == prompt and "attachments" not in (user.metadata or {})
    await runtime.aclose()


def test_at_tokens_are_words_starting_with_at() -> None:
    from smith_tui.engine.attachments import mentioned_paths

    assert mentioned_paths("mail me@example.com about @a.py and @b/c.md, then @a.py") == [
        "a.py",
        "b/c.md,",
    ]
    assert json.dumps(mentioned_paths("no tokens here")) == "[]"
