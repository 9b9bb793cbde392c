"""Shared pieces of the screen tests: a host app and runtime helpers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen

from smith_tui.app.screens.palette import SmithCommands
from smith_tui.engine.runtime import Runtime
from tests.support.runtime import open_runtime

OFFLINE_URL = "http://127.0.0.1:9/v1"
"""An api_url nothing listens on (screens that never reach the server)."""

SIZE = (120, 40)


class ScreenHost(App[None]):
    """Pushes one screen on mount and records its result and the actions run by name."""

    COMMANDS = App.COMMANDS | {SmithCommands}

    def __init__(self, make_screen: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self.make_screen = make_screen
        self.results: list[Any] = []
        self.actions: list[str] = []

    def on_mount(self) -> None:
        """Show the screen under test."""
        self.push_screen(self.make_screen(), self.results.append)

    def action_open_history(self) -> None:
        """Recorded (the palette test)."""
        self.actions.append("open_history")

    def action_new_conversation(self) -> None:
        """Recorded (the palette test)."""
        self.actions.append("new_conversation")

    def action_switch_role(self, name: str) -> None:
        """Recorded (the palette test)."""
        self.actions.append(f"switch_role:{name}")


def offline_runtime(tmp_path: Path, **kwargs: Any) -> Runtime:
    """A real runtime (tmp database, config and git repo) that never needs the server."""
    runtime, _ = open_runtime(tmp_path, OFFLINE_URL, **kwargs)
    return runtime


def seed_conversation(runtime: Runtime, title: str | None = None) -> str:
    """A conversation with a user prompt, a tool call, its result and an answer; made active."""
    store = runtime.store
    conv = store.conversations.create(runtime.project_id, title)
    call = {
        "id": "call_ls",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    store.conversations.append_messages(
        conv,
        [
            {"role": "user", "content": "List the files in this repository"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_ls", "name": "bash", "content": "README.md\n"},
            {"role": "assistant", "content": "There is one file: README.md."},
        ],
    )
    runtime.conversations.load(conv)
    return conv
