"""Workers in their own worktrees: a real runtime, real git, the scripted server over HTTP."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from smith_tui.engine.runtime import Runtime
from smith_tui.tools.worktrees import WorkerTrees
from tests.dispatch.support import dispatch, parent_bodies, report, results, tool_messages
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime

CONFIG = {"active_role": "orchestrator", "permissions": {"mode": "yolo"}}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def _files(repo: Path) -> dict[str, bytes]:
    """Every file of the work tree and the repository's index, byte for byte."""
    found = {
        str(p.relative_to(repo)): p.read_bytes()
        for p in repo.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }
    found[".git/index"] = (repo / ".git" / "index").read_bytes()
    return found


def _worker(content: str) -> Any:
    """A worker's one reply: write shared.txt, record where bash runs, report."""
    return text_reply(
        tool_calls=[
            tool_call("write", {"path": "shared.txt", "content": content}),
            tool_call("bash", {"command": "pwd > where.txt"}),
            report(status="ok", summary=f"shared.txt now says {content.strip()}"),
        ],
        delay_s=0.3,
    )


def _repo(tmp_path: Path) -> Path:
    repo = make_git_repo(tmp_path / "repo")
    (repo / "shared.txt").write_text("base\n")
    _git(repo, "add", "shared.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "shared")
    # Uncommitted work the workers must start from: a change and an untracked file.
    (repo / "README.md").write_text("# demo, edited\n")
    (repo / "notes.txt").write_text("untracked\n")
    return repo


async def _run_two_workers(
    tmp_path: Path, server: ScriptedLLMServer
) -> tuple[Runtime, Path, list[dict[str, Any]], dict[str, bytes]]:
    repo = _repo(tmp_path)
    before = _files(repo)
    calls = [
        dispatch("worker", f"Make shared.txt say {word}", worktree=True) for word in ("one", "two")
    ]
    server.enqueue(
        text_reply(tool_calls=calls),
        _worker("alpha\n"),
        _worker("beta\n"),
        text_reply("Both workers are done."),
    )
    runtime, _ = open_runtime(tmp_path, server.base_url, config=CONFIG, cwd=repo)
    result = await runtime.run_turn("Change shared.txt twice, in parallel")
    assert result.stop_reason == "completed", result
    return runtime, repo, results(runtime), before


async def test_two_workers_in_two_worktrees_reach_the_parent_then_merge_and_drop(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    runtime, repo, got, before = await _run_two_workers(tmp_path, llm_server)
    assert [r["status"] for r in got] == ["ok", "ok"]
    trees = [r["worktree"] for r in got]
    branches = {t["branch"] for t in trees}
    assert branches == {f"smith/{r['job_id']}" for r in got}

    # Each worker ran in its own worktree under the data folder, not in the project.
    for tree in trees:
        path = Path(tree["path"])
        assert path.is_relative_to(tmp_path / "worktrees") and not path.is_relative_to(repo)
        # bash's working directory (its project root, sandboxed or not) was the worktree.
        assert (path / "where.txt").read_text().strip() == str(path)
        # It started from HEAD plus the uncommitted changes.
        assert (path / "README.md").read_text() == "# demo, edited\n"
        assert (path / "notes.txt").read_text() == "untracked\n"
        assert tree["files"] == ["M shared.txt", "A where.txt"]
        assert "shared.txt" in tree["stat"] and "where.txt" in tree["stat"]
    diffs = sorted(t["diff"] for t in trees)
    assert "-base\n+alpha" in diffs[0] and "-base\n+beta" in diffs[1]

    # The parent's next request holds both reports with their branches and diffs.
    last = parent_bodies(llm_server)[-1]["messages"]
    sent = [json.loads(m["content"]) for m in last if m["role"] == "tool"]
    assert {s["worktree"]["branch"] for s in sent} == branches
    assert sorted("+alpha" in s["worktree"]["diff"] for s in sent) == [False, True]
    assert sorted("+beta" in s["worktree"]["diff"] for s in sent) == [False, True]

    # The user's working tree and index are untouched until a merge.
    assert _files(repo) == before
    listed = _git(repo, "branch", "--list", "smith/*")
    assert all(b in listed for b in branches)

    # Merge the first, then the second conflicts (it changed shared.txt too), then drop it.
    first, second = got[0], got[1]
    merge_first = tool_call("worktree", {"action": "merge", "job_id": first["job_id"]})
    merge_second = tool_call("worktree", {"action": "merge", "job_id": second["job_id"]})
    drop_second = tool_call("worktree", {"action": "drop", "job_id": second["job_id"]})
    llm_server.enqueue(
        text_reply(tool_calls=[merge_first]),
        text_reply(tool_calls=[merge_second]),
        text_reply(tool_calls=[drop_second]),
        text_reply("Merged one, dropped the other."),
    )
    result = await runtime.run_turn("Merge them")
    assert result.stop_reason == "completed", result
    out = {m.tool_call_id: m.content for m in tool_messages(runtime) if m.name == "worktree"}
    word = "alpha" if "+alpha" in first["worktree"]["diff"] else "beta"
    assert (repo / "shared.txt").read_text() == f"{word}\n"
    assert (repo / "where.txt").read_text().strip() == first["worktree"]["path"]
    assert out[merge_first.id].startswith(f"merged worker {first['job_id']}")
    assert out[merge_second.id].startswith("error:")
    assert "refused" in out[merge_second.id] and "shared.txt" in out[merge_second.id]
    assert second["worktree"]["branch"] in out[merge_second.id]
    assert out[drop_second.id].startswith(f"dropped worker {second['job_id']}")
    # The user's index is still untouched; the other files are as they were.
    now = _files(repo)
    assert now[".git/index"] == before[".git/index"]
    assert {k: v for k, v in now.items() if k not in ("shared.txt", "where.txt")} == {
        k: v for k, v in before.items() if k != "shared.txt"
    }
    # Merged and dropped: no worktree, no branch, no record left.
    assert not any(_exists(tree["path"]) for tree in trees)
    assert _git(repo, "branch", "--list", "smith/*") == ""
    assert str(tmp_path / "worktrees") not in _git(repo, "worktree", "list")
    assert list(runtime.worktrees.records()) == []

    # The merge was recorded as a checkpoint: /undo takes it back.
    await runtime.submit("/undo")
    assert await asyncio.to_thread(_files, repo) == before
    await runtime.aclose()


async def test_a_project_without_git_refuses_the_worktree_option(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    call = dispatch("worker", "Edit something", worktree=True)
    llm_server.enqueue(text_reply(tool_calls=[call]), text_reply("Could not."))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config=CONFIG, cwd=plain)
    result = await runtime.run_turn("Try a worktree")
    assert result.stop_reason == "completed"
    message = next(m.content for m in tool_messages(runtime) if m.tool_call_id == call.id)
    assert message.startswith("error: worktree:")
    assert "not in a git repository" in message and "without `worktree`" in message
    # No child ran: the only other request is the parent's next one.
    assert len(llm_server.chat_requests()) == 2
    assert not (tmp_path / "worktrees").exists() or not any((tmp_path / "worktrees").iterdir())
    await runtime.aclose()


def _exists(path: str) -> bool:
    return Path(path).exists()


def test_a_crashed_sessions_worktree_is_cleaned_at_the_next_start(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = _repo(tmp_path)
    trees = WorkerTrees(tmp_path)
    tree = trees.create(repo, "job-0123456789")
    assert Path(tree.path, "shared.txt").is_file()
    assert "smith/job-0123456789" in _git(repo, "branch", "--list", "smith/*")
    # The session that made it is gone (a process that has exited).
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    record = Path(tree.folder, "record.json")
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "pid": int(gone.stdout)}))
    # A live session's worktree is left alone.
    live = trees.create(repo, "job-live000000")

    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config=CONFIG, cwd=repo)
    assert not Path(tree.folder).exists()
    assert tree.path not in _git(repo, "worktree", "list")
    assert "job-0123456789" not in _git(repo, "branch", "--list", "smith/*")
    assert [t.job_id for t in runtime.worktrees.records()] == [live.job_id]
    assert Path(live.path).is_dir()
    asyncio.run(runtime.aclose())


async def test_the_config_gives_workers_worktrees_and_explorers_none(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = _repo(tmp_path)
    config = {**CONFIG, "services": {"dispatch": {"worktree": True}}}
    found = {"status": "ok", "summary": "read it", "findings": ["x"], "evidence": ["a:1"]}
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("explorer", "Look around")]),
        text_reply(tool_calls=[report(**found)]),
        text_reply(tool_calls=[dispatch("worker", "Change it")]),
        text_reply(tool_calls=[report(status="ok", summary="nothing to change")]),
        text_reply("Done."),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config=config, cwd=repo)
    await runtime.run_turn("Look, then change")
    explorer, worker = results(runtime)
    assert "worktree" not in explorer
    assert worker["worktree"]["branch"] == f"smith/{worker['job_id']}"
    assert worker["worktree"]["files"] == []
    await runtime.aclose()


async def test_closing_the_session_removes_its_worktrees_and_keeps_finished_branches(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = _repo(tmp_path)
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, config=CONFIG, cwd=repo)
    trees = runtime.worktrees
    finished = await asyncio.to_thread(trees.create, repo, "job-finished00")
    await asyncio.to_thread(_write, Path(finished.path, "shared.txt"), "done\n")
    finished, _ = await asyncio.to_thread(trees.collect, finished, "worker")
    cancelled = await asyncio.to_thread(trees.create, repo, "job-cancelled0")
    await runtime.aclose()
    assert not any(_exists(t.path) for t in (finished, cancelled))
    assert _git(repo, "branch", "--list", "smith/*").split() == ["smith/job-finished00"]
    assert _git(repo, "show", "smith/job-finished00:shared.txt") == "done\n"


def _write(path: Path, text: str) -> None:
    path.write_text(text)
