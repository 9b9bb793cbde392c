"""The installed ``smith`` in tmux: waiting is visible and says what to change (issue 22).

A silent server is named on the status line (after half the stall timeout here, so the
test waits seconds, not 15) with the stall timeout in effect, and the retry names the
setting that fired; the permission mode and the sandbox show before the first prompt.
At 80×24 and 160×45.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.support.llm_script import stall
from tests.support.llm_server import text_reply
from tests.support.tmux import smith_in_tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SIZES = [(80, 24), (160, 45)]
QUIET = re.compile(r"no data from the server for (\d+) s · stall timeout 4 s · esc to cancel")


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_a_silent_server_is_named_and_the_retry_names_the_setting(
    tmp_path, llm_server, size
) -> None:
    llm_server.enqueue(stall(after_events=0, hold_s=30), text_reply("Recovered after the stall."))
    # recv_timeout equal to the stall timeout, as with the defaults (120 and 120)
    timeouts = {"stream_stall_timeout": 4, "recv_timeout": 4}
    config = {"llm_config": {**timeouts, "retry_backoff_ms": [50]}}
    with smith_in_tmux(tmp_path, llm_server.base_url, json.dumps(config), size=size) as pane:
        pane.wait_for("Ask Smith")
        # The mode and the sandbox are on the line before anything was asked.
        pane.wait_for("mode: ask")
        sandbox = re.compile(r"mode: ask  │  (sandboxed|unsandboxed|sandbox unavailable)")
        pane._wait(lambda text: sandbox.search(text) is not None, "no sandbox shown", 10)
        pane.type("say something")
        pane.send("Enter")
        screen = pane._wait(
            lambda text: QUIET.search(text) is not None, "the quiet server was not named", 20
        )
        seconds = int(QUIET.search(screen).group(1))  # type: ignore[union-attr]
        assert 2 <= seconds < 4  # from half the stall timeout, before it fires
        screen = pane.wait_for("llm_config.stream_stall_timeout")
        assert "recv_timeout" not in screen
        screen = pane.wait_for("Recovered after the stall.")
        assert not QUIET.search(screen)
        pane.send("C-q")
        pane.wait_for("SMITH-EXIT=0")
