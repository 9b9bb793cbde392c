"""A sub-agent from an agent file in the panes (Pilot): its name in the dispatch tree, in
its colour, and its own line in the usage pane once it ran; the rain takes its colour."""

from __future__ import annotations

from pathlib import Path

from smith_tui.engine.roles import role_display
from smith_tui.widgets.dispatch_tree import DispatchTree
from smith_tui.widgets.usage_pane import UsagePane
from tests.app.app_harness import screen_text
from tests.app.test_panes import SIZE, PanesHost
from tests.support.llm_server import ScriptedLLMServer, Usage, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime

AGENT = """---
name: reviewer
description: Reviews a change for bugs
tools: Read, Grep
color: "#12AB34"
---
Review the files you are given and report each bug with its file and line.
"""
REPORT = {
    "status": "ok",
    "summary": "No bugs in pkg/core.py",
    "findings": ["pkg/core.py reads cleanly"],
    "evidence": ["pkg/core.py:1"],
}


async def test_a_file_agent_shows_in_the_tree_and_the_usage_pane(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text(AGENT)
    llm_server.enqueue(text_reply(tool_calls=[tool_call("report", REPORT)], usage=Usage(300, 40)))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, cwd=repo, env={})
    app = PanesHost()
    try:
        async with app.run_test(size=SIZE) as pilot:
            usage_pane = app.query_one(UsagePane)
            await runtime.refresh_setup()
            rows = usage_pane.table_text().plain.splitlines()
            assert not any(row.startswith("revi") for row in rows)  # not run yet: no line
            unsubscribe = runtime.bus.subscribe(app.feed)
            result = await runtime.submit("@reviewer look at pkg/")
            unsubscribe()
            await pilot.pause()
            assert result.stop_reason == "completed", result

            tree = app.query_one(DispatchTree)
            [job] = tree.jobs.values()
            assert job.role == "reviewer" and job.status == "ok"
            assert tree.job_label(job.job_id).startswith("✓ reviewer ok ")
            assert role_display("reviewer") == ("reviewer", "#12AB34")
            rows = usage_pane.table_text().plain.splitlines()
            assert rows[-1].split() == ["revi…", "300/40", "300/40"]
            assert "✓ reviewer ok" in screen_text(app)
    finally:
        await runtime.aclose()
