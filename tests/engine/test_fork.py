"""/fork: a new conversation with the history up to a turn, its files optionally put back
to that turn, linked to its source; the source stays as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.engine.forks import FORKED_FROM
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))


async def test_fork_at_a_turn_with_its_files(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    for n in (1, 2, 3):
        llm_server.enqueue(
            text_reply(tool_calls=[tool_call("write", {"path": "a.txt", "content": f"v{n}\n"})]),
            text_reply(f"wrote v{n}"),
        )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    repo = Path(runtime.options.cwd)
    for n in (1, 2, 3):
        await runtime.submit(f"write version {n}")
    source = runtime.conversations.conversation_id
    before = [m["content"] for m in runtime.conversations.messages]
    assert (repo / "a.txt").read_text() == "v3\n"

    out = await runtime.submit("/fork 2 --files")
    assert out.ok, out.text
    fork = runtime.conversations.conversation_id
    assert fork != source and out.data == {"conversation_id": fork, "forked_from": source}
    assert "now in the fork" in out.text and "restored 1 file" in out.text
    assert (repo / "a.txt").read_text() == "v2\n"  # the files as turn 2 left them
    contents = [m["content"] for m in runtime.conversations.messages]
    assert contents == before[: contents.index("wrote v2") + 1]
    assert "write version 3" not in contents
    meta = runtime.store.conversations.get(fork).metadata[FORKED_FROM]
    assert meta["conversation"] == source
    # The source is untouched.
    assert [m.content for m in runtime.store.conversations.list_messages(source)] == before

    llm_server.enqueue(text_reply("forked answer"))
    await runtime.submit("go another way")
    sent = [m["content"] for m in llm_server.chat_requests()[-1]["messages"] if m["role"] == "user"]
    assert "write version 2" in sent and "write version 3" not in sent

    out = await runtime.submit("/history")
    assert f"fork of {source}" in out.text
    for bad in ("/fork 9", "/fork x", "/fork 1 2"):
        out = await runtime.submit(bad)
        assert not out.ok and "usage: /fork" in out.text
    await runtime.aclose()


async def test_fork_of_the_whole_conversation_leaves_files_alone(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "b.txt", "content": "b\n"})]),
        text_reply("wrote b"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    await runtime.submit("write b")
    source, count = runtime.conversations.conversation_id, len(runtime.conversations.messages)
    out = await runtime.submit("/fork")
    assert (
        out.ok
        and runtime.conversations.conversation_id != source
        and len(runtime.conversations.messages) == count
    )
    assert (Path(runtime.options.cwd) / "b.txt").read_text() == "b\n"
    await runtime.aclose()
