"""The installed ``smith`` in a real terminal (tmux) against the scripted server.

Types a request, waits for the streamed answer and the tool call on screen, cancels a
second (stalled) turn with ctrl+c and quits with ctrl+q.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.support.llm_server import stall, text_reply, tool_call
from tests.support.tmux import SMITH, smith_in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_smith_in_tmux_answers_runs_a_tool_cancels_and_quits(tmp_path, llm_server) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hi\n")
    llm_server.enqueue(
        text_reply("Checking.", tool_calls=[tool_call("bash", {"command": "echo tmux-$((40+2))"})]),
        text_reply("The answer is forty-two.", chunk_chars=4),
        stall(after_events=2, hold_s=60),
    )
    with smith_in_tmux(tmp_path, llm_server.base_url) as pane:
        pane.wait_for("Ask Smith")
        pane.type("what is the answer?")
        pane.send("Enter")
        pane.wait_for("wants to run bash")  # the app asks first (permissions.mode ask)
        pane.send("y")
        screen = pane.wait_for("The answer is forty-two.")
        assert "what is the answer?" in screen, screen
        assert "bash" in screen and "echo tmux-$((40+2))" in screen
        pane.wait_for("● idle")

        pane.type("and now wait")
        pane.send("Enter")
        pane.wait_for("Mr. Anderson")  # the stalled stream's first words
        pane.send("C-c")
        pane.wait_for("■ cancelled")

        pane.send("C-c")  # idle now: a hint, not an exit
        pane.wait_for("to quit")
        pane.send("C-q")
        pane.wait_for("SMITH-EXIT=0")
    requests = [r for r in llm_server.requests if r.path.endswith("/chat/completions")]
    assert len(requests) == 3


def test_smith_with_an_unknown_resume_id_says_so_without_a_traceback(tmp_path) -> None:
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SMITH_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "c"), XDG_DATA_HOME=str(tmp_path / "d"))
    command = [str(SMITH), "--resume", "no-such-id", "--api-url", "http://127.0.0.1:9/v1"]
    command += ["--db", str(tmp_path / "smith.db"), "--config", str(config)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
    )
    assert done.returncode == 2
    assert "no conversation with id 'no-such-id'" in done.stderr
    assert "Traceback" not in done.stderr
