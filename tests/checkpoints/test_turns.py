"""Checkpoints through real turns: a runtime, the scripted server, real tools, /undo, /rewind."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.checkpoints import NOTICE_COMMAND
from tests.checkpoints.support import hash_git_dir, tree_of
from tests.dispatch.support import dispatch, report
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import Recorder, open_runtime


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


def _write(path: str, content: str) -> object:
    return tool_call("write", {"path": path, "content": content})


def _notices(rec: Recorder) -> list[ev.CommandOutput]:
    return [e for e in rec.of(ev.CommandOutput) if e.command == NOTICE_COMMAND]


async def test_a_turn_that_writes_files_is_checkpointed_and_undone(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[_write("README.md", "rewritten\n"), _write("new.txt", "n\n")]),
        text_reply("done"),
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    repo = tmp_path / "repo"
    (repo / "notes.txt").write_text("user's untracked notes\n")
    before, git_before = tree_of(repo), hash_git_dir(repo)

    result = await runtime.run_turn("rewrite the readme")

    assert result.stop_reason == "completed"
    assert (repo / "README.md").read_text() == "rewritten\n"
    [notice] = _notices(rec)
    assert notice.data["files"] == [["M", "README.md"], ["A", "new.txt"]]
    assert "/undo" in notice.text

    undone = await runtime.submit("/undo")
    assert undone.ok, undone.text
    assert "restored 2 files" in undone.text and "README.md" in undone.text
    assert tree_of(repo) == before
    assert hash_git_dir(repo) == git_before

    again = await runtime.submit("/undo")
    assert again.ok and (repo / "README.md").read_text() == "rewritten\n"
    await runtime.aclose()


async def test_a_turn_that_only_reads_records_no_checkpoint(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("read", {"path": "README.md"})]), text_reply("ok")
    )
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    await runtime.run_turn("read the readme")
    out = await runtime.submit("/rewind")
    assert out.text == "no checkpoints yet in this project"
    assert _notices(rec) == []
    await runtime.aclose()


async def test_a_workers_changes_belong_to_the_parent_turns_checkpoint(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("worker", "Write WORK.md", files=["WORK.md"])]),
        text_reply(tool_calls=[_write("WORK.md", "worker output\n")]),
        text_reply(
            tool_calls=[
                report(status="ok", summary="wrote it", changes=["WORK.md"], verification=[])
            ]
        ),
        text_reply("the worker is done"),
    )
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"active_role": "orchestrator"}
    )
    repo = tmp_path / "repo"

    result = await runtime.run_turn("have a worker write WORK.md")

    assert result.stop_reason == "completed", result.error
    assert (repo / "WORK.md").read_text() == "worker output\n"
    [started] = [e for e in rec.of(ev.TurnStarted) if e.job_id is None]
    listed = await runtime.submit("/rewind")
    [entry] = listed.data["checkpoints"]
    assert entry["turn_id"] == started.turn_id
    assert entry["files"] == [["A", "WORK.md"]]

    undone = await runtime.submit("/undo")
    assert undone.ok and not (repo / "WORK.md").exists()
    await runtime.aclose()


async def test_checkpoints_persist_across_continue(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_write("README.md", "first\n")]), text_reply("a"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    await runtime.run_turn("first turn")
    await runtime.aclose()

    later, _ = open_runtime(tmp_path, llm_server.base_url)
    later.conversations.continue_latest()
    listed = await later.submit("/rewind")
    [entry] = listed.data["checkpoints"]
    assert entry["prompt"] == "first turn"
    out = await later.submit(f"/rewind {entry['id']}")
    assert out.ok, out.text
    assert (tmp_path / "repo" / "README.md").read_text() == "# demo\n"
    await later.aclose()


async def test_rewind_can_also_truncate_the_conversation(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply("just talk"),
        text_reply(tool_calls=[_write("README.md", "second\n")]),
        text_reply("wrote"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    await runtime.run_turn("hello")
    kept = len(runtime.conversations.messages)
    await runtime.run_turn("change the readme")
    listed = await runtime.submit("/rewind")
    [entry] = listed.data["checkpoints"]

    out = await runtime.submit(f"/rewind {entry['id'][:6]} --conversation")

    assert out.ok, out.text
    assert (tmp_path / "repo" / "README.md").read_text() == "# demo\n"
    assert len(runtime.conversations.messages) == kept
    assert out.data["removed_messages"] > 0
    await runtime.aclose()


async def test_checkpoints_off_records_nothing(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_write("README.md", "x\n")]), text_reply("a"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"checkpoints": {"enabled": False}}
    )
    await runtime.run_turn("change it")
    assert _notices(rec) == []
    out = await runtime.submit("/undo")
    assert "nothing to undo" in out.text
    await runtime.aclose()


async def test_a_tree_over_the_limit_gives_a_notice_and_the_tool_still_runs(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply(tool_calls=[_write("README.md", "x\n")]), text_reply("a"))
    runtime, rec = open_runtime(
        tmp_path, llm_server.base_url, config={"checkpoints": {"max_bytes": 10}}
    )
    (tmp_path / "repo" / "big.txt").write_text("y" * 100)
    await runtime.run_turn("change it")
    [notice] = _notices(rec)
    assert not notice.ok and "checkpoints.max_bytes" in notice.text
    assert (tmp_path / "repo" / "README.md").read_text() == "x\n"
    await runtime.aclose()


async def test_rewind_rejects_bad_arguments_without_a_traceback(tmp_path: Path) -> None:
    runtime, _ = open_runtime(tmp_path, "http://127.0.0.1:9/v1")
    bad = await runtime.submit("/rewind abc --everything")
    unknown = await runtime.submit("/rewind nosuchid")
    await runtime.aclose()
    assert not bad.ok and "usage: /rewind" in bad.text
    assert not unknown.ok and "no checkpoint 'nosuchid'" in unknown.text
