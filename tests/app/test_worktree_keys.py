"""The dispatch tree's m (merge) and d (drop) on finished workers that ran in worktrees of
their own (services.dispatch.worktree): real app, runtime, git and the scripted server, Pilot."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from smith_tui.widgets.dispatch_tree import DispatchTree
from tests.app.app_harness import (
    isolated_runtime,
    make_app,
    running,
    submit,
    wait_for_text,
    wait_until,
)
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo

CONFIG = {
    "active_role": "orchestrator",
    "permissions": {"mode": "yolo"},
    "services": {"dispatch": {"worktree": True}},
}


def _worker(word: str) -> Any:
    return text_reply(
        tool_calls=[
            tool_call("write", {"path": "shared.txt", "content": f"{word}\n"}),
            report(status="ok", summary=f"wrote {word}"),
        ],
        delay_s=0.3,
    )


def _notes(app: Any) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def _branches(repo: Path) -> str:
    argv = ["git", "-C", str(repo), "branch", "--list", "smith/*"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


async def test_merge_and_drop_from_the_dispatch_tree(
    tmp_path: Path, monkeypatch: Any, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "project")
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "say one"), dispatch("worker", "say two")]),
        _worker("one"),
        _worker("two"),
        text_reply("Both reported."),
    )
    with isolated_runtime(tmp_path, monkeypatch, llm_server.base_url, config=CONFIG) as runtime:
        app = make_app(runtime)
        async with running(app, size=(160, 45)) as pilot:
            await submit(pilot, "two workers")
            # Not busy also holds before the turn has started (a busy machine starts it
            # after submit returns); its last answer comes once both workers reported.
            await wait_for_text(pilot, "Both reported.", within=60)
            await wait_until(pilot, lambda: not runtime.busy, "the turn to end")
            tree = app.main_screen.query_one(DispatchTree)
            # The tree hears of the jobs' ends through the app's queue.
            await wait_until(
                pilot,
                lambda: len(tree.jobs) == 2 and all(j.result for j in tree.jobs.values()),
                "both reports in the tree",
            )
            assert all("worktree" in (job.result or {}) for job in tree.jobs.values())
            assert not (repo / "shared.txt").exists()  # nothing in the project yet
            await pilot.press("alt+d")  # the tree, the cursor on the newest job
            # (The key is answered after press returns when the machine is busy.)
            await wait_until(pilot, lambda: tree.job_tree.has_focus, "the tree's focus")
            node = tree.job_tree.cursor_node
            assert node is not None and node.data is not None and node.data[0] == "job"
            newest = node.data[1]
            word = tree.jobs[newest].result["summary"].split()[-1]  # type: ignore[index]
            await pilot.press("m")
            await wait_until(pilot, lambda: "merged worker" in _notes(app), "the merge")
            assert (repo / "shared.txt").read_text() == f"{word}\n"

            await pilot.press("up")  # the other job
            await wait_until(pilot, lambda: tree.job_tree.cursor_node is not node, "the move")
            node = tree.job_tree.cursor_node
            assert node is not None and node.data is not None and node.data[1] != newest
            other = node.data[1]
            await pilot.press("m")
            await wait_until(pilot, lambda: "refused" in _notes(app), "the refusal")
            assert "shared.txt" in _notes(app)
            assert (repo / "shared.txt").read_text() == f"{word}\n"  # nothing written
            await pilot.press("d")
            await wait_until(pilot, lambda: f"dropped worker {other}" in _notes(app), "the drop")
            assert _branches(repo) == ""
            assert list(runtime.worktrees.records()) == []
