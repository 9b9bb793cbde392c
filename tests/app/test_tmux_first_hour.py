"""The first hour in a real terminal (tmux, 80x24) against the scripted server: text typed
after ctrl+r n is sent, PageUp from the prompt scrolls, a prompt typed during a turn is
queued and sent when it ends, Esc interrupts."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.support.llm_server import stall, text_reply, tool_call
from tests.support.tmux import smith_in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_first_hour_keys_in_a_real_terminal(tmp_path, llm_server) -> None:
    long_answer = "\n\n".join(f"paragraph {n} of the long answer" for n in range(40))
    wait = "while [ ! -f go ]; do sleep 0.05; done; echo released"
    llm_server.enqueue(
        text_reply(long_answer),
        text_reply(tool_calls=[tool_call("bash", {"command": wait})]),
        text_reply("Gate passed."),
        text_reply("Queued one answered."),
        stall(after_events=2, hold_s=60),
    )
    # The gate is a bash loop: run it without the permission question (not this test's topic).
    config = '{"permissions": {"mode": "yolo"}}'
    with smith_in_tmux(tmp_path, llm_server.base_url, config, size=(80, 24)) as pane:
        pane.wait_for("Ask Smith")
        for _attempt in range(20):  # ctrl+r is refused until the session has opened
            pane.send("C-r")
            try:
                pane.wait_for("Conversations", within=1.0)
                break
            except AssertionError:
                continue
        pane.wait_for("Conversations")
        pane.send("n")
        pane.wait_for("Ask Smith")
        pane.type("tell me a lot")
        pane.send("Enter")
        pane.wait_for("paragraph 39 of the long answer")
        pane.wait_for("● idle")
        # At once: the end of the answer may still be rebuilding, and the page up must win.
        pane.send("PageUp")
        # A page up from the end leaves the last paragraph and shows earlier ones (how many
        # depends on how the answer wrapped, so no exact paragraph is named).
        screen = pane.wait_until_gone("paragraph 39 of the long answer")
        assert re.search(r"paragraph 3\d of the long answer", screen), screen

        pane.type("open the gate")
        pane.send("Enter")
        pane.wait_for("bash")
        pane.type("and then this")
        pane.send("Enter")
        pane.wait_for("⏸ queued: and then this")
        (tmp_path / "project" / "go").write_text("")
        pane.wait_for("Queued one answered.")

        pane.type("now wait")
        pane.send("Enter")
        pane.wait_for("Mr. Anderson")
        pane.send("Escape")
        pane.wait_for("■ cancelled")
        pane.send("C-q")
        pane.wait_for("SMITH-EXIT=0")
    prompts = []
    for request in llm_server.chat_requests():
        users = [m for m in request["messages"] if m["role"] == "user"]
        users = [m for m in users if not str(m["content"]).startswith("[state snapshot]")]
        prompts.append(users[-1]["content"])
    assert prompts[0] == "tell me a lot"
    assert "and then this" in prompts
