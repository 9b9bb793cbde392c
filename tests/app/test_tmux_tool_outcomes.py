"""Tool outcomes in a real terminal (tmux, 80x24, the side panes hidden): a running command's
last lines stream under its transcript row, and its non-zero exit reads ``✗ exit 3``."""

from __future__ import annotations

import shutil

import pytest

from tests.support.llm_server import text_reply, tool_call
from tests.support.tmux import smith_in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_live_tail_and_failed_exit_in_a_real_terminal(tmp_path, llm_server) -> None:
    command = (
        "for i in 1 2 3 4; do echo tail-line-$i; done; "
        "while [ ! -f go ]; do sleep 0.05; done; exit 3"
    )
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": command})]),
        text_reply("The command failed."),
    )
    config = '{"permissions": {"mode": "yolo"}}'
    with smith_in_tmux(tmp_path, llm_server.base_url, config, size=(80, 24)) as pane:
        pane.wait_for("Ask Smith")
        pane.type("run it")
        pane.send("Enter")
        screen = pane.wait_for("│ tail-line-4")
        assert "│ tail-line-2" in screen and "tail-line-1" not in screen  # the last three
        (tmp_path / "project" / "go").write_text("")
        screen = pane.wait_for("The command failed.")
        assert "✗ exit 3" in screen and "✓" not in screen
        assert "│ tail-line-4" not in screen  # the tail goes when the call ends
        pane.send("C-q")
        pane.wait_for("SMITH-EXIT=0")
