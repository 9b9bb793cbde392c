"""One wording for token counts, durations, role names and a tool call's key argument."""

from __future__ import annotations

import io

import pytest

from smith_tui.app.headless import HeadlessPrinter
from smith_tui.engine import events as ev
from smith_tui.engine.presentation import format_duration, format_tokens, key_argument, role_label
from smith_tui.engine.roles import role_display


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (850, "850"),
        (1234, "1.2k"),
        (12_345, "12k"),
        (999_999, "999k"),
        (1_234_567, "1.2M"),
    ],
)
def test_format_tokens(count: int, text: str) -> None:
    assert format_tokens(count) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, ""),
        (-1.0, "0.0s"),
        (0.314, "0.3s"),
        (4.25, "4.2s"),
        (12.9, "12s"),
        (125.0, "2m05s"),
        (3725.0, "1h02m"),
    ],
)
def test_format_duration(seconds: float | None, text: str) -> None:
    assert format_duration(seconds) == text


def test_role_display_and_label() -> None:
    assert role_display("orchestrator") == ("Tank", "#FFB000")
    assert role_display("Niobe") == ("Niobe", "#FF4FD8")
    assert role_display("direct") == ("Smith", None)
    assert role_display("ghost") == ("ghost", None)
    assert role_display("") == ("?", None)
    assert role_label("explorer") == ("Link", "bold #00E5FF")
    assert role_label("direct") == ("Smith", "bold")


def test_key_argument_covers_what_both_panes_showed() -> None:
    # Per-tool keys (from the transcript) and the special cases (from the tools pane).
    assert key_argument("code_files", '{"path": "src", "query": "main"}') == "main"
    assert key_argument("note", {"key": "k", "value": "v"}) == "k"
    assert key_argument("git", '{"command": "log", "args": ["-n", "3"]}') == "log -n 3"
    assert key_argument("todo", {"items": [{}, {}]}) == "2 items"
    assert key_argument("report", '{"summary": "done it", "status": "completed"}') == "completed"
    assert key_argument("dispatch", {"target_role": "worker"}) == "worker"
    assert key_argument("dispatch", {"task": "fix  it"}) == "fix it"
    # A blank key argument falls through to the next candidate.
    assert key_argument("bash", {"command": "  ", "path": "x"}) == "x"
    # Non-string values are shown as JSON; text that is not an object as its text.
    assert key_argument("read", {"path": ["a", "b"]}) == '["a", "b"]'
    assert key_argument("read", "  not\n json ") == "not json"
    assert key_argument("read", "{}") == ""
    assert key_argument("read", {"offset": 3}) == ""
    assert key_argument("read", None) == ""


def test_headless_printer_names_the_key_argument() -> None:
    err = io.StringIO()
    printer = HeadlessPrinter("text", stdout=io.StringIO(), stderr=err)
    printer(
        ev.ToolCallStarted(
            turn_id="t1",
            call_id="c1",
            name="bash",
            arguments='{"command": "ls  -la", "timeout": 5}',
        )
    )
    assert err.getvalue() == "→ bash ls -la\n"
