"""Hook runs show where tool calls show: the tools pane and the headless printer.

The events come from a real runtime running real hook scripts (a deny, a context
hook), then go to the pane (Pilot) and to the ``smith -p`` printer.
"""

from __future__ import annotations

import io
from pathlib import Path

from smith_tui.app.headless import HeadlessPrinter
from smith_tui.engine import events as ev
from smith_tui.widgets.activity import ToolActivity
from tests.app.test_panes import SIZE, PanesHost
from tests.engine.hooks.support import hooks_runtime, python_hook
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call


async def hook_events(tmp_path: Path, server: ScriptedLLMServer) -> list[ev.Event]:
    deny = python_hook(
        tmp_path / "hooks", "deny", 'print("not in this repo", file=sys.stderr); sys.exit(2)'
    )
    context = python_hook(tmp_path / "hooks", "context", 'print("today is Tuesday")')
    server.enqueue(text_reply(tool_calls=[tool_call("bash", {"command": "ls"})]), text_reply("ok"))
    runtime, rec = hooks_runtime(
        tmp_path,
        server.base_url,
        {"UserPromptSubmit": [{"command": context}], "PreToolUse": [{"command": deny}]},
        config={"permissions": {"mode": "yolo"}},
    )
    await runtime.run_turn("list")
    await runtime.aclose()
    return rec.events


async def test_the_tools_pane_shows_each_hook_run_with_its_outcome(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    events = await hook_events(tmp_path, llm_server)
    app = PanesHost()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(ToolActivity)
        app.feed(*events)
        await pilot.pause()
        lines = pane.line_texts()
        hook_lines = [line for line in lines if "hook " in line]
        assert hook_lines[0].startswith("✓ Smith hook UserPromptSubmit ok:")
        assert hook_lines[1].startswith("✗ Smith hook PreToolUse denied:")
        states = [(c.name, c.state) for c in pane.calls]
        assert states == [
            ("hook UserPromptSubmit", "ok"),
            ("bash", "error"),
            ("hook PreToolUse", "error"),
        ]
        assert pane.calls[2].summary == "not in this repo"


async def test_the_headless_printer_names_a_hook_that_stopped_something(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    events = await hook_events(tmp_path, llm_server)
    out, err = io.StringIO(), io.StringIO()
    printer = HeadlessPrinter("text", stdout=out, stderr=err)
    for event in events:
        printer(event)
    assert "hook PreToolUse denied: not in this repo" in err.getvalue()
    assert "UserPromptSubmit" not in err.getvalue()  # a hook that just ran is not news
    stream = io.StringIO()
    printer = HeadlessPrinter("stream-json", stdout=stream, stderr=io.StringIO())
    for event in events:
        printer(event)
    assert '"type": "hook_run"' in stream.getvalue()
