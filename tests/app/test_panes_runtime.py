"""The panes follow a real turn: a runtime against the scripted server dispatches an explorer."""

from __future__ import annotations

from pathlib import Path

from smith_tui.widgets.activity import ToolActivity
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.usage_pane import UsagePane
from tests.app.app_harness import screen_text
from tests.app.test_panes import SIZE, PanesHost
from tests.support.llm_server import ScriptedLLMServer, Usage, text_reply, tool_call
from tests.support.runtime import open_runtime

DISPATCH_ARGS = {
    "target_role": "explorer",
    "task": "Find where the config file is loaded",
    "context": {
        "user_request_summary": "The user asks where the configuration is loaded.",
        "role_instructions": "Read only; cite file and line.",
    },
}
REPORT_ARGS = {
    "status": "ok",
    "summary": "The config is loaded by load_config in smith/config.py.",
    "findings": ["load_config reads ~/.config/smith/config.json"],
    "evidence": ["smith/config.py:12"],
}


async def test_a_real_dispatch_turn_fills_the_tree_activity_and_usage(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.catalog = {
        "data": [
            {
                "id": "scripted-model",
                "context_length": 10_000,
                "pricing": {"prompt": "0.000001", "completion": "0.000004"},
            }
        ]
    }
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("dispatch", DISPATCH_ARGS)], usage=Usage(1000, 50)),
        text_reply(tool_calls=[tool_call("report", REPORT_ARGS)], usage=Usage(400, 80)),
        text_reply("It is loaded in smith/config.py.", usage=Usage(1500, 20)),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    app = PanesHost()
    try:
        async with app.run_test(size=SIZE) as pilot:
            usage_pane = app.query_one(UsagePane)
            usage_pane.load_catalog(await runtime.catalog())
            # same event loop: the panes can follow the runtime directly
            unsubscribe = runtime.bus.subscribe(app.feed)
            result = await runtime.submit("Where is the config loaded?")
            unsubscribe()
            await pilot.pause()
            assert result.stop_reason == "completed", result

            tree = app.query_one(DispatchTree)
            [turn] = tree.turns.values()
            [job] = tree.jobs.values()
            assert turn.prompt == "Where is the config loaded?"
            assert tree.turn_label(turn.turn_id).startswith("✓ #1 Where is the config loaded?")
            assert job.role == "explorer" and job.status == "ok"
            assert job.tokens == 480
            assert job.result is not None and job.result["evidence"] == ["smith/config.py:12"]
            label = tree.job_label(job.job_id)
            assert label.startswith("✓ Link ok ") and "480 tok" in label
            assert label.endswith("· Find where the config file is loaded")
            assert "3.0k tok" in tree.turn_label(turn.turn_id)  # 1050 + 480 + 1520

            activity = app.query_one(ToolActivity)
            assert [(c.name, c.role, c.state) for c in activity.calls] == [
                ("dispatch", "direct", "ok"),
                ("report", "explorer", "ok"),
            ]
            assert activity.calls[1].job_id == job.job_id
            assert not activity.ticking and not tree.ticking

            rows = usage_pane.table_text().plain.splitlines()
            assert rows[1].split() == ["Smith", "2.5k/70", "2.5k/70"]
            assert rows[4].split() == ["Link", "400/80", "400/80"]
            expected_cost = (2500 + 400) * 1e-6 + (70 + 80) * 4e-6
            assert abs(usage_pane.session_cost - expected_cost) < 1e-12
            assert not usage_pane.unpriced
            # the last top-level request: 1500 + 20 tokens of a 10k window
            assert usage_pane.context_text() == "context 1.5k / 10k"
            assert usage_pane.context_bar.percentage == 0.152
            assert list(usage_pane.sparkline.data or []) == [3050]

            screen = screen_text(app)
            assert "Link report ok" in screen and "✓ Link ok" in screen
            assert runtime.usage.totals()["explorer"]["total_tokens"] == 480
    finally:
        await runtime.aclose()


async def test_the_usage_pane_shows_reported_cost_and_spend_against_each_limit(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    # The catalog prices the model, but the server reports each call's cost: that wins.
    llm_server.catalog = {
        "data": [{"id": "scripted-model", "pricing": {"prompt": "0.01", "completion": "0.01"}}]
    }
    reported = {"prompt_tokens": 4000, "completion_tokens": 500, "cost": 0.25}
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "echo hi"})], usage=reported),
        text_reply("done", usage={**reported, "completion_tokens": 0, "cost": 0.5}),
    )
    runtime, _ = open_runtime(
        tmp_path,
        llm_server.base_url,
        config={"budget": {"turn_tokens": 10_000, "conversation_cost_usd": 1.0}},
    )
    app = PanesHost()
    try:
        async with app.run_test(size=SIZE) as pilot:
            usage_pane = app.query_one(UsagePane)
            unsubscribe = runtime.bus.subscribe(app.feed)
            result = await runtime.submit("spend")
            unsubscribe()
            await pilot.pause()
            assert result.stop_reason == "completed", result

            assert usage_pane.turn_cost == 0.75 and usage_pane.priced
            rows = usage_pane.table_text().plain.splitlines()
            assert rows[-3].split() == ["cost", "$0.75", "$0.75"]
            # 8,500 of 10,000 tokens and $0.75 of $1.00: the token line crossed 80%.
            assert rows[-2].split() == ["turn", "8.5k/10k", "85%"]
            assert rows[-1].split() == ["conv", "$0.75/$1.00", "75%"]
            assert usage_pane.budget_warning.startswith("85% of the turn tokens budget used")
    finally:
        await runtime.aclose()
