"""Opening a long stored conversation reads its end, not all of it: the transcript's
newest messages, older ones a page at a time, the prompt history; the whole list is read
when something needs it (the next turn)."""

from __future__ import annotations

from pathlib import Path

from tests.support.llm_server import text_reply
from tests.support.runtime import open_runtime


def _rounds(count: int) -> list[dict]:
    """``count`` rounds of a coding session: a question, a tool call, its result, an answer."""
    out: list[dict] = []
    for n in range(count):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        out += [
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": f"out {n}"},
            {"role": "assistant", "content": f"answer {n}"},
        ]
    return out


async def test_a_resumed_conversation_is_shown_from_its_end(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    try:
        store = runtime.store.conversations
        conversation = store.create(runtime.project_id, "long")
        store.append_messages(conversation, _rounds(250))  # 1,000 messages
        runtime.conversations.load(conversation)

        recent = runtime.conversations.recent(50)
        # The newest 50 would start inside a round (at "out 237"); a view gets whole rounds.
        assert [m["content"] for m in recent[:2]] == ["question 238", ""]
        assert recent[-1]["content"] == "answer 249" and len(recent) == 48
        older = runtime.conversations.before(recent[0]["position"], 4)
        assert [m["content"] for m in older] == ["question 237", "", "out 237", "answer 237"]
        # From the start, newer pages (a view opened at the conversation's first message).
        first = runtime.conversations.after(-1, 3)
        assert [m["content"] for m in first] == ["question 0", "", "out 0"]
        newer = runtime.conversations.after(first[-1]["position"], 2)
        assert [m["content"] for m in newer] == ["answer 0", "question 1"]
        assert runtime.conversations.prompts(3) == ["question 247", "question 248", "question 249"]

        # The whole transcript is there for the next turn, and the turn adds to it.
        assert len(runtime.conversations.messages) == 1000
        assert runtime.conversations.messages[0]["content"] == "question 0"
        llm_server.enqueue(text_reply("done"))
        result = await runtime.run_turn("one more")
        assert result.stop_reason == "completed"
        assert [m["content"] for m in runtime.conversations.messages[-2:]] == ["one more", "done"]
        assert runtime.conversations.recent(2)[-1]["content"] == "done"
        assert runtime.conversations.prompts(1) == ["one more"]
    finally:
        await runtime.aclose()


def test_a_new_conversation_has_nothing_to_show(tmp_path: Path) -> None:
    runtime, _ = open_runtime(tmp_path, None)
    try:
        runtime.conversations.new()
        assert runtime.conversations.recent(50) == []
        assert runtime.conversations.before(10, 5) == []
        assert runtime.conversations.after(-1, 5) == []
        assert runtime.conversations.prompts(5) == []
        assert runtime.conversations.messages == []
    finally:
        runtime.store.close()


async def test_after_a_turn_only_what_it_stored_is_read(tmp_path: Path, llm_server) -> None:
    """A long session's next turn does not read the whole conversation again: the held
    transcript gains the rows the turn appended; a change to rows it holds (a repair that
    inserted results, a deletion) makes it read everything, so it is always the store's."""
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    try:
        store = runtime.store.conversations
        conversation = store.create(runtime.project_id, "long")
        store.append_messages(conversation, _rounds(100))
        runtime.conversations.load(conversation)
        assert len(runtime.conversations.messages) == 400
        reads: list[dict] = []
        list_messages = store.list_messages

        def recording(conversation_id: str, **options: object) -> list:
            reads.append(options)
            return list_messages(conversation_id, **options)  # type: ignore[arg-type]

        store.list_messages = recording  # type: ignore[method-assign]
        for n in range(3):
            llm_server.enqueue(text_reply(f"done {n}"))
            assert (await runtime.run_turn(f"more {n}")).stop_reason == "completed"
        held = runtime.conversations.messages
        assert all(read.get("after_position") is not None for read in reads) and reads
        whole = [m for m in list_messages(conversation)]
        assert [(m["id"], m["position"], m["content"]) for m in held] == [
            (m.id, m.position, m.content) for m in whole
        ]
        assert [m["content"] for m in held[-2:]] == ["more 2", "done 2"]

        # A row held moves (results inserted earlier on): the next use reads it whole.
        reads.clear()
        store.insert_messages_at(conversation, 3, [whole[2]])
        store.delete_message(whole[10].id)
        llm_server.enqueue(text_reply("after the change"))
        assert (await runtime.run_turn("again")).stop_reason == "completed"
        held = runtime.conversations.messages
        assert {} in reads  # read whole
        assert [(m["id"], m["position"]) for m in held] == [
            (m.id, m.position) for m in list_messages(conversation)
        ]
    finally:
        await runtime.aclose()
