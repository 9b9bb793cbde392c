"""System prompt assembly, the state snapshot and the per-request message list."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from smith_tui.engine.prompt import (
    PARTIAL_PREFIX,
    SNAPSHOT_CHARS,
    SNAPSHOT_PREFIX,
    WIRE_KEYS,
    PromptProfileError,
    RequestBudget,
    build_messages,
    build_state_snapshot,
    build_system_prompt,
    load_profile,
    to_wire,
)
from smith_tui.engine.roles import RoleSpec, list_roles, resolve_role
from smith_tui.engine.scope import TurnScope
from smith_tui.engine.window import WindowSettings

FULL_SCOPE = TurnScope(
    cwd=Path("/repo/src"),
    root=Path("/repo"),
    origin="git@github.com:Owner/Repo.git",
    normalized_origin="github.com/Owner/Repo",
    project_id="0123456789abcdef",
    index_file="INDEX.md",
    index_content="# Index\n\nRun `make test`.\n",
)


@pytest.mark.parametrize("spec", list_roles(), ids=lambda s: s.name)
def test_every_role_has_a_profile_naming_its_alias(spec: RoleSpec) -> None:
    text = load_profile(spec.prompt_profile)
    assert text.startswith(f"# You are {spec.alias}")
    if spec.user_facing:
        assert "`dispatch`" in text
    else:
        assert "`report`" in text


def test_profiles_mention_the_role_specific_tools() -> None:
    assert "`git`" in load_profile("orchestrator")
    assert "`bash`" not in load_profile("orchestrator").split("## Tools")[1]
    assert "evidence" in load_profile("explorer")
    assert "`edit`" in load_profile("worker")


def test_full_prompt_has_blocks_in_fixed_order() -> None:
    prompt = build_system_prompt(resolve_role("worker"), FULL_SCOPE, extra_blocks=["## Extra\nx"])
    profile = load_profile("worker")
    assert prompt == (
        f"{profile}\n\n"
        "## Project information\n"
        "- CWD: /repo/src\n"
        "- Repository root: /repo\n"
        "- Git origin: git@github.com:Owner/Repo.git\n"
        "- Normalized origin: github.com/Owner/Repo\n"
        "- Project ID: 0123456789abcdef\n\n"
        "## Project context\n"
        "# Index\n\nRun `make test`.\n\n"
        "## Extra\nx"
    )


def test_missing_fields_and_empty_blocks_are_skipped() -> None:
    scope = TurnScope(cwd=Path("/tmp/scratch"))
    prompt = build_system_prompt(resolve_role("direct"), scope, extra_blocks=["", "  \n"])
    assert prompt == load_profile("direct") + "\n\n## Project information\n- CWD: /tmp/scratch"
    assert "Project context" not in prompt
    assert build_system_prompt(resolve_role("direct")) == load_profile("direct")


def test_explicit_index_content_overrides_scope() -> None:
    prompt = build_system_prompt(resolve_role("explorer"), FULL_SCOPE, "custom index")
    assert prompt.endswith("## Project context\ncustom index")


def test_system_prompt_is_byte_stable() -> None:
    role = resolve_role("orchestrator")
    first = build_system_prompt(role, FULL_SCOPE).encode()
    load_profile.cache_clear()
    second = build_system_prompt(role, copy.deepcopy(FULL_SCOPE)).encode()
    assert first == second
    assert str(datetime.now().year) not in first.decode()


def test_unknown_profile_is_a_clear_error() -> None:
    spec = RoleSpec("ghost", "Ghost", False, False, (), "ghost")
    with pytest.raises(PromptProfileError, match=r"data/prompts/ghost\.md"):
        build_system_prompt(spec)


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (datetime(2030, 1, 7, 23, 59, tzinfo=UTC), "date 2030-01-07, Monday, timezone UTC+00:00"),
        (
            datetime(2024, 2, 29, 8, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))),
            "date 2024-02-29, Thursday, timezone UTC+05:30",
        ),
        (
            datetime(2025, 12, 31, 1, 0, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
            "date 2025-12-31, Wednesday, timezone UTC-03:30",
        ),
    ],
)
def test_state_snapshot_text(now: datetime, expected: str) -> None:
    snapshot = build_state_snapshot(now)
    assert snapshot == {
        "role": "user",
        "content": f"[state snapshot] {expected}",
    }


def test_naive_time_is_taken_as_local() -> None:
    naive = datetime(2030, 6, 1, 12, 0)
    local = naive.astimezone()
    assert build_state_snapshot(naive) == build_state_snapshot(local)


NOW = datetime(2030, 1, 1, tzinfo=UTC)


def test_build_messages_wraps_history_without_touching_it() -> None:
    history = [
        {"role": "user", "content": "hi", "metadata": {"x": 1}, "id": 7},
        {"role": "assistant", "content": "hello", "reasoning": "because"},
    ]
    before = copy.deepcopy(history)
    messages = build_messages("SYSTEM", history, NOW)
    assert messages == [
        {"role": "system", "content": "SYSTEM"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        build_state_snapshot(NOW),
    ]
    assert history == before


def test_window_then_messages_keeps_the_real_question() -> None:
    history = [{"role": "user", "content": "question"}, {"role": "assistant", "content": "x" * 800}]
    settings = WindowSettings(trim_threshold_pct=100)
    messages = build_messages("S", history, NOW, context_window=10, window=settings)
    assert [m["content"][:8] for m in messages] == ["S", "question", "[state s"]
    assert all(m.keys() <= {"role", "content"} for m in messages)
    # The window is off: everything goes.
    off = build_messages("S", history, NOW, context_window=10, window=WindowSettings(enabled=False))
    assert len(off) == 4


def test_the_system_prompt_takes_its_share_of_the_window() -> None:
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "x" * 200}]
    settings = WindowSettings(trim_threshold_pct=100, output_reserve_pct=0)
    # 51 tokens of history + 20 of snapshot + 1 of prompt fit 80
    assert len(build_messages("S", history, NOW, context_window=80, window=settings)) == 4
    long_prompt = "p" * 160  # 40 more tokens
    assert len(build_messages(long_prompt, history, NOW, context_window=80, window=settings)) == 3


def test_the_budget_counts_prompt_tools_snapshot_and_output_reserve() -> None:
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"d": "x" * 300}}}]
    tools_chars = len(json.dumps(tools))
    settings = WindowSettings(output_reserve_pct=10)
    budget = RequestBudget.of("p" * 400, tools, 1000, None, settings)
    assert budget.fixed == -(-(400 + tools_chars + SNAPSHOT_CHARS) // 4)
    assert budget.reserve == 100  # 10% of the window without a max output
    assert RequestBudget.of("p", None, 1000, 300, settings).reserve == 300
    assert RequestBudget.of("p", None, 1000, 900, settings).reserve == 500  # at most half

    # History that fits beside the prompt alone is cut down once tools and reserve count.
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "x" * 1600}]
    roomy = WindowSettings(trim_threshold_pct=100, output_reserve_pct=0)
    assert len(build_messages("S", history, NOW, context_window=480, window=roomy)) == 4
    with_tools = build_messages("S", history, NOW, context_window=480, window=roomy, tools=tools)
    assert len(with_tools) == 3
    reserved = build_messages("S", history, NOW, context_window=480, max_output_tokens=200)
    assert len(reserved) == 3


def test_a_partial_view_is_said_in_one_line_of_the_snapshot() -> None:
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "x" * 200}]
    settings = WindowSettings(trim_threshold_pct=100, output_reserve_pct=0)
    whole = build_messages("S", history, NOW, context_window=80, window=settings)
    assert PARTIAL_PREFIX not in whole[-1]["content"]
    partial = build_messages("S" * 160, history, NOW, context_window=80, window=settings)
    snapshot = partial[-1]["content"]
    assert snapshot.startswith(SNAPSHOT_PREFIX)
    line = snapshot.splitlines()[1]
    assert (
        line == f"{PARTIAL_PREFIX} 1 older rounds or messages left out to fit the context window."
    )


def test_to_wire_keeps_only_wire_keys_and_never_reasoning() -> None:
    assistant = {
        "role": "assistant",
        "content": "hi",
        "tool_calls": [],
        "reasoning": "r",
        "reasoning_content": "rc",
        "reasoning_details": [{"type": "reasoning.encrypted", "data": "x"}],
        "metadata": {"reasoning_details": [{"type": "reasoning.text", "text": "t"}]},
        "tool_call_id": "stray",
    }
    tool = {"role": "tool", "tool_call_id": "a", "name": "bash", "content": None, "recall_key": "k"}
    snap = {"role": "user", "content": "snap", "transient": True}
    before = copy.deepcopy([assistant, tool, snap])
    assert to_wire(assistant) == {"role": "assistant", "content": "hi"}
    assert to_wire(tool) == {"role": "tool", "tool_call_id": "a", "name": "bash", "content": ""}
    assert to_wire(snap) == {"role": "user", "content": "snap"}
    assert to_wire({"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c"}],
    }
    assert [assistant, tool, snap] == before
    assert all(to_wire(m).keys() <= WIRE_KEYS for m in before)
