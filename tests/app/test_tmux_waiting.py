"""The installed ``smith`` in tmux: waiting is visible and says what to change (issue 22).

A silent server is named on the status line (after half the stall timeout here, so the
test waits seconds, not 15) with the stall timeout in effect, and the retry names the
setting that fired; the permission mode and the sandbox show before the first prompt; the
welcome screen asks the URL it saves for its models and says what came back. At 80×24
and 160×45.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.support.llm_script import stall
from tests.support.llm_server import text_reply
from tests.support.tmux import SMITH, TmuxPane, smith_in_tmux, tmux_env

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
        pane.wait_for("say something")  # in the prompt before it is sent
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


def _welcome(tmp_path, size):
    """``smith`` with no server configured anywhere: the welcome screen."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    command = (
        f"{SMITH} --db {tmp_path / 'smith.db'} --config {config}; echo SMITH-EXIT=$?; sleep 60"
    )
    return TmuxPane(command, project, tmux_env(tmp_path), size=size), config


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("catalog_status", [200, 503])
def test_the_welcome_screen_says_what_the_saved_url_answered(
    tmp_path, llm_server, size, catalog_status
) -> None:
    llm_server.catalog_status = catalog_status
    pane, config = _welcome(tmp_path, size)
    try:
        pane.wait_for("Welcome to Agent Smith")
        probed = re.compile(r"No server answered|Found on this machine")
        pane._wait(lambda text: probed.search(text) is not None, "the ports were not probed", 20)
        if "Found on this machine" in pane.text():
            pytest.skip("a server on this machine's usual ports fills the field in")
        pane.type(llm_server.base_url)
        pane.send("Enter")
        if catalog_status == 200:
            # (short needles: the notice wraps at 80 columns)
            pane.wait_for("answers:")
            pane.wait_for("(scripted-model).")
            # Then what smith doctor would say (the scripted server answers "ok" to the
            # request offering one tool: no tool call, a failing finding).
            pane.wait_for("tool calls ✗")
            assert len(llm_server.chat_requests()) == 2  # the tool probe and the limit probe
        else:
            pane.wait_for("did not")
            pane.wait_for("503")
        assert json.loads(config.read_text())["llm_config"]["api_url"] == llm_server.base_url
        assert any(r.path.endswith("/models") for r in llm_server.requests)
        pane.send("C-q")
        pane.wait_for("SMITH-EXIT=0")
    finally:
        pane.kill()
