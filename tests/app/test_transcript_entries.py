"""Tool calls, dispatch cards, diffs, notices, code-block copy and engine events."""

from __future__ import annotations

import json

from textual.color import Color

from smith_tui.engine import events as ev
from smith_tui.engine.presentation import key_argument
from smith_tui.widgets.transcript.assistant_message import AssistantMessage
from smith_tui.widgets.transcript.code_markdown import CopyableFence
from smith_tui.widgets.transcript.diff_view import DiffView, change_lines, render_lines
from smith_tui.widgets.transcript.dispatch_card import DispatchCard
from smith_tui.widgets.transcript.entries import ToolEntry
from smith_tui.widgets.transcript.notice import Notice
from smith_tui.widgets.transcript.tool_call import ToolCallEntry
from smith_tui.widgets.transcript.user_message import UserMessage
from tests.support.pilot import screen_text, wait_until
from tests.support.transcript_app import SIZE, TranscriptApp


def test_key_argument_per_tool() -> None:
    assert key_argument("bash", '{"command": "ls  -la\\n /tmp", "timeout": 5}') == "ls -la /tmp"
    assert key_argument("read", {"path": "src/app.py", "offset": 10}) == "src/app.py"
    assert key_argument("edit", '{"path": "a.py", "text": "x"}') == "a.py"
    assert key_argument("write", '{"content": "x", "path": "b.py"}') == "b.py"
    assert key_argument("code_grep", '{"pattern": "def main", "path": "src"}') == "def main"
    assert key_argument("dispatch", {"target_role": "explorer", "task": "Find it"}) == (
        "explorer: Find it"
    )
    assert key_argument("mystery", '{"size": 3, "label": "x"}') == "x"
    assert key_argument("bash", "not json") == "not json"
    assert key_argument("bash", "") == ""


async def test_tool_entry_is_compact_and_expands_to_the_full_result() -> None:
    output = "\n".join(f"file_{i}.txt" for i in range(12))
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        entry = transcript.add_tool_call("call_1", "bash", '{"command": "ls -la /tmp/work"}')
        await pilot.pause()
        line = screen_text(app)
        assert "▸ bash  ls -la /tmp/work" in line and "…" in line
        assert entry.outer_size.height == 1
        transcript.finish_tool_call("call_1", True, 0.314, "12 files", output, {"exit_code": 0})
        await pilot.pause()
        text = screen_text(app)
        assert "0.3s ✓" in text and "file_3.txt" not in text
        await pilot.click(entry)
        await wait_until(pilot, lambda: "file_11.txt" in screen_text(app), "the full result")
        assert entry.expanded and "▾ bash" in screen_text(app)
        await pilot.click(entry.query_one(".tool-output"))  # reading the output keeps it open
        assert entry.expanded
        entry.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "file_3.txt" not in screen_text(app), "collapsed again")
        assert not entry.expanded and entry.entry.expanded is False


async def test_failed_tool_call_is_marked() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        entry = transcript.add_tool_call("c", "read", {"path": "missing.txt"})
        transcript.finish_tool_call("c", False, 0.02, "not found", "missing.txt does not exist.")
        await pilot.pause()
        assert "✗" in screen_text(app) and entry.has_class("-error")
        assert entry.result_text() == "missing.txt does not exist."


def test_edit_with_before_and_after_becomes_a_coloured_diff() -> None:
    entry = ToolEntry(
        call_id="e",
        name="edit",
        arguments={"path": "app.py"},
        finished=True,
        metadata={"path": "app.py", "before": "a = 1\nb = 2\n", "after": "a = 1\nb = 3\n"},
    )
    lines = change_lines(entry)
    assert lines is not None
    assert ("removed", "-b = 2") in lines and ("added", "+b = 3") in lines
    assert lines[0] == ("header", "--- a/app.py")
    text = render_lines(lines)
    styles = {str(span.style) for span in text.spans}
    assert {"green", "red", "cyan"} <= styles


def test_edit_result_context_marks_the_changed_lines() -> None:
    content = (
        "Edited a.py: replaced lines 2-2 (1) with 1 line(s); ...\n"
        "context (lines 1-3):\n"
        "     1\tkeep\n     2\tnew text\n     3\tkeep too"
    )
    entry = ToolEntry(
        call_id="e",
        name="edit",
        finished=True,
        content=content,
        metadata={"path": "a.py", "affected_start": 2, "affected_end": 2},
    )
    kinds = [kind for kind, _ in change_lines(entry) or []]
    assert kinds == ["header", "header", "context", "added", "context"]


def test_write_shows_the_written_content_as_added() -> None:
    entry = ToolEntry(
        call_id="w",
        name="write",
        arguments=json.dumps({"path": "new.py", "content": "x = 1\ny = 2\n"}),
        finished=True,
        metadata={"path": "new.py"},
    )
    assert change_lines(entry) == [
        ("header", "+++ b/new.py"),
        ("added", "+x = 1"),
        ("added", "+y = 2"),
    ]
    entry.metadata = {"diff": "@@ -1 +1 @@\n-old\n+new\n context"}
    assert change_lines(entry) == [
        ("hunk", "@@ -1 +1 @@"),
        ("removed", "-old"),
        ("added", "+new"),
        ("context", " context"),
    ]


async def test_expanded_edit_shows_the_diff_view() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        entry = transcript.add_tool_call("e1", "edit", '{"path": "m.py"}')
        transcript.finish_tool_call(
            "e1", True, 0.01, "edited", "Edited m.py", {"before": "old\n", "after": "new\n"}
        )
        await pilot.pause()
        await pilot.click(entry)
        await wait_until(pilot, lambda: entry.query(DiffView), "the diff view")
        await wait_until(pilot, lambda: "+new" in screen_text(app), "the added line")
        assert "-old" in screen_text(app)


async def test_dispatch_result_is_a_tinted_card() -> None:
    result = {
        "role": "explorer",
        "status": "ok",
        "summary": "Found where the spoon is bent.",
        "findings": ["spoon.py bends it in bend()"],
        "evidence": ["spoon.py:12-30"],
        "job_id": "job_1",
    }
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        card = app.transcript.add_dispatch_result(result)
        await pilot.pause()
        text = screen_text(app)
        assert "Link · ok" in text
        assert "Found where the spoon is bent." in text
        assert "Findings" in text and "• spoon.py bends it in bend()" in text
        assert "• spoon.py:12-30" in text
        assert card.styles.border.top[1] == Color.parse("#00E5FF")
        assert card.has_class("-ok")


async def test_dispatch_tool_result_adds_its_card() -> None:
    result = {"role": "worker", "status": "partial", "summary": "Half done.", "changes": ["a.py"]}
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        transcript.add_tool_call("d1", "dispatch", {"target_role": "worker", "task": "Fix a.py"})
        transcript.finish_tool_call(
            "d1", True, 4.2, "partial", json.dumps(result), {"dispatch": result}
        )
        await pilot.pause()
        card = transcript.query_one(DispatchCard)
        assert card.status == "partial"
        assert "Niobe · partial" in screen_text(app)
        assert card.styles.border.top[1] == Color.parse("#FF4FD8")


async def test_clicking_a_code_block_copies_its_code_without_wrapping() -> None:
    long_line = "result = compute(" + ", ".join(f"argument_{i}" for i in range(20)) + ")"
    code = f"def main() -> None:\n    {long_line}\n    return None"
    answer = f"Here is the code:\n\n```python\n{code}\n```\n\nDone.\n"
    assert len(long_line) > SIZE[0]
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.transcript
        transcript.append_text(answer)
        transcript.end_assistant()
        await transcript.settle()
        await pilot.pause()
        fence = transcript.query_one(CopyableFence)
        await pilot.click(fence)
        assert app.clipboard == code
        assert app.clipboard.count("\n") == 2  # only the code's own line breaks


async def test_engine_events_drive_the_transcript() -> None:
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        t = app.transcript
        events = [
            ev.TurnStarted(turn_id="t1", conversation_id="c", prompt="Count the files"),
            ev.ReasoningDelta(turn_id="t1", text="Use ls."),
            ev.TextDelta(turn_id="t1", text="Let me "),
            ev.TextDelta(turn_id="t1", text="check."),
            ev.AssistantMessage(turn_id="t1", content="Let me check.", tool_calls=[{}]),
            ev.ToolCallStarted(
                turn_id="t1", call_id="k1", name="bash", arguments='{"command": "ls"}'
            ),
            # a sub-agent's events belong to the dispatch tree, not here
            ev.TextDelta(turn_id="t2", text="child text", job_id="job_9", role="explorer"),
            ev.ToolCallFinished(
                turn_id="t1",
                call_id="k1",
                name="bash",
                ok=True,
                duration_s=0.5,
                summary="ok",
                content="3",
            ),
            ev.StreamReset(turn_id="t1", reason="retry"),
            ev.TextDelta(turn_id="t1", text="There are 3 files."),
            ev.AssistantMessage(turn_id="t1", content="There are 3 files."),
            ev.TurnFinished(turn_id="t1", conversation_id="c", stop_reason="completed"),
            ev.CommandOutput(command="/usage", text="Tokens: 42", ok=True),
            ev.TurnFinished(
                turn_id="t3",
                conversation_id="c",
                stop_reason="error",
                error={"message": "the server said no"},
            ),
        ]
        for event in events:
            t.handle_event(event)
        await t.settle()
        await pilot.pause()
        kinds = [type(w).__name__ for w in t.entry_widgets]
        assert kinds == [
            "UserMessage",
            "AssistantMessage",
            "ToolCallEntry",
            "AssistantMessage",
            "Notice",
            "Notice",
        ]
        first, second = t.query(AssistantMessage)
        assert first.source == "Let me check." and first.entry.reasoning == "Use ls."
        assert second.source == "There are 3 files."
        assert t.query_one(UserMessage).source == "Count the files"
        assert t.query_one(ToolCallEntry).entry.finished
        notices = list(t.query(Notice))
        assert notices[1].has_class("-error") and "the server said no" in notices[1].entry.text
        assert "child text" not in screen_text(app)


async def test_stored_messages_become_entries() -> None:
    dispatch = {
        "role": "explorer",
        "status": "ok",
        "summary": "Mapped it.",
        "findings": ["x"],
        "evidence": ["y"],
    }
    messages = [
        {"role": "user", "content": "Map the repo", "position": 0},
        {
            "role": "assistant",
            "content": "",
            "reasoning": "Delegate.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "dispatch",
                        "arguments": '{"target_role": "explorer", "task": "Map"}',
                    },
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "README.md"}'},
                },
            ],
            "position": 1,
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "dispatch",
            "content": json.dumps(dispatch),
            "metadata": {"ok": True, "duration_s": 3.0},
            "position": 2,
        },
        {
            "role": "tool",
            "tool_call_id": "c2",
            "name": "read",
            "content": "# Readme",
            "metadata": {"ok": False, "duration_s": 0.01},
            "position": 3,
        },
        {"role": "assistant", "content": "All **mapped**.", "position": 4},
    ]
    app = TranscriptApp()
    async with app.run_test(size=SIZE) as pilot:
        t = app.transcript
        await t.load_messages(messages)
        await pilot.pause()
        kinds = [type(w).__name__ for w in t.entry_widgets]
        assert kinds == [
            "UserMessage",
            "AssistantMessage",
            "ToolCallEntry",
            "ToolCallEntry",
            "DispatchCard",
            "AssistantMessage",
        ]
        dispatch_entry, read_entry = t.query(ToolCallEntry)
        assert dispatch_entry.entry.finished and dispatch_entry.entry.duration_s == 3.0
        assert not read_entry.entry.ok and read_entry.entry.content == "# Readme"
        text = screen_text(app)
        assert "Link · ok" in text and "All mapped." in text and "README.md" in text
