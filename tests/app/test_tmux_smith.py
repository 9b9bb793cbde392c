"""The installed ``smith`` in a real terminal (tmux) against the scripted server.

Types a request, waits for the streamed answer and the tool call on screen, cancels a
second (stalled) turn with ctrl+c and quits with ctrl+q.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.llm_server import stall, text_reply, tool_call

SMITH = Path(sys.executable).parent / "smith"

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class TmuxPane:
    """One detached tmux session running a command; read by ``capture-pane``."""

    def __init__(
        self, command: str, cwd: Path, env: dict[str, str], size: tuple[int, int] = (120, 36)
    ) -> None:
        self.name = f"smith-test-{uuid.uuid4().hex[:10]}"
        self.env = env
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                str(size[0]),
                "-y",
                str(size[1]),
                "-c",
                str(cwd),
                command,
            ],
            check=True,
            env=env,
        )

    def text(self) -> str:
        """The visible screen as plain text."""
        done = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            env=self.env,
        )
        return done.stdout

    def send(self, *keys: str) -> None:
        """Send keys (tmux key names such as ``Enter``, ``C-c``) or literal text."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True, env=self.env)

    def type(self, text: str) -> None:
        """Type ``text`` literally."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True, env=self.env)

    def wait_for(self, needle: str, within: float = 20.0) -> str:
        """Wait until ``needle`` is on screen; fail with the screen after ``within`` seconds."""
        deadline = time.monotonic() + within
        screen = ""
        while time.monotonic() < deadline:
            screen = self.text()
            if needle in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} did not appear; the screen shows:\n{screen}")

    def wait_until_gone(self, needle: str, within: float = 20.0) -> str:
        """Wait until ``needle`` is no longer on screen; fail with the screen after ``within``."""
        deadline = time.monotonic() + within
        screen = ""
        while time.monotonic() < deadline:
            screen = self.text()
            if needle not in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{needle!r} stayed on screen:\n{screen}")

    def kill(self) -> None:
        """End the session (and whatever still runs in it)."""
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, env=self.env)


def test_smith_in_tmux_answers_runs_a_tool_cancels_and_quits(tmp_path, llm_server) -> None:
    if not SMITH.exists():
        pytest.fail(f"the smith script is not installed at {SMITH}; run `pip install -e .`")
    project = tmp_path / "project"
    project.mkdir()
    (project / "hello.txt").write_text("hi\n")
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "TMUX"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        TERM="xterm-256color",
        TMUX_TMPDIR=str(tmp_path),  # a private tmux server for this test
    )
    env.pop("LLM_API_KEY", None)
    llm_server.enqueue(
        text_reply("Checking.", tool_calls=[tool_call("bash", {"command": "echo tmux-$((40+2))"})]),
        text_reply("The answer is forty-two.", chunk_chars=4),
        stall(after_events=2, hold_s=60),
    )
    command = (
        f"{SMITH} --api-url {llm_server.base_url} --db {tmp_path / 'smith.db'} "
        f"--config {config}; echo SMITH-EXIT=$?; sleep 60"
    )
    pane = TmuxPane(command, project, env)
    try:
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
    finally:
        pane.kill()
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
