"""An empty conversation leaves no row behind: it is stored with its first message."""

from __future__ import annotations

from pathlib import Path

from smith_tui.engine import events as ev
from tests.support.llm_server import text_reply
from tests.support.runtime import open_runtime


def _rows(runtime) -> list[str]:
    return [c.id for c in runtime.store.conversations.list_all(limit=100)]


async def test_new_and_clear_store_nothing_until_a_message_is_written(
    tmp_path: Path, llm_server
) -> None:
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    try:
        first = runtime.conversations.prepare()
        assert first and _rows(runtime) == []
        assert (await runtime.submit("/new")).ok
        assert (await runtime.submit("/clear")).ok
        assert _rows(runtime) == []
        changed = rec.of(ev.ConversationChanged)
        assert [c.reason for c in changed] == ["new", "new", "new"]
        # The panes are told about each one even though none is stored yet.
        assert len({c.conversation_id for c in changed}) == 3

        llm_server.enqueue(text_reply("stored now"))
        result = await runtime.run_turn("hello")
        assert result.stop_reason == "completed"
        assert _rows(runtime) == [runtime.conversations.conversation_id]
        stored = runtime.store.conversations.list_messages(runtime.conversations.conversation_id)
        assert [m.content for m in stored] == ["hello", "stored now"]
        # It is also the one a restart resumes.
        assert (
            runtime.persistence.active_conversation(runtime.project_id)
            == runtime.conversations.conversation_id
        )
    finally:
        await runtime.aclose()


async def test_pinning_a_model_stores_the_conversation(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    try:
        runtime.conversations.new()
        assert _rows(runtime) == []
        assert (await runtime.submit("/model some-model")).ok
        assert _rows(runtime) == [runtime.conversations.conversation_id]
        assert runtime.conversations.pinned_model == "some-model"
    finally:
        await runtime.aclose()
