"""The installed ``smith`` in a real terminal: a detached tmux session read by ``capture-pane``."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

#: The ``smith`` script installed next to this interpreter.
SMITH = Path(sys.executable).parent / "smith"


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
            stdin=subprocess.DEVNULL,
        )

    def text(self) -> str:
        """The visible screen as plain text."""
        done = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            env=self.env,
            stdin=subprocess.DEVNULL,
        )
        return done.stdout

    def send(self, *keys: str) -> None:
        """Send keys (tmux key names such as ``Enter``, ``C-c``) or literal text."""
        subprocess.run(
            ["tmux", "send-keys", "-t", self.name, *keys],
            check=True,
            env=self.env,
            stdin=subprocess.DEVNULL,
        )

    def type(self, text: str) -> None:
        """Type ``text`` literally."""
        subprocess.run(
            ["tmux", "send-keys", "-t", self.name, "-l", text],
            check=True,
            env=self.env,
            stdin=subprocess.DEVNULL,
        )

    def wait_for(self, needle: str, within: float = 20.0) -> str:
        """Wait until ``needle`` is on screen; fail with the screen after ``within`` seconds."""
        return self._wait(lambda screen: needle in screen, f"{needle!r} did not appear", within)

    def wait_until_gone(self, needle: str, within: float = 20.0) -> str:
        """Wait until ``needle`` is no longer on screen; fail with the screen after ``within``."""
        return self._wait(lambda screen: needle not in screen, f"{needle!r} stayed", within)

    def wait_still(self, quiet: float = 0.5, within: float = 20.0) -> str:
        """Wait until the screen has not changed for ``quiet`` seconds (the app is idle)."""
        deadline = time.monotonic() + within
        screen, since = self.text(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self.text()
            if now != screen:
                screen, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return screen
        raise AssertionError(f"the screen kept changing for {within} s:\n{screen}")

    def _wait(self, done: Callable[[str], bool], failure: str, within: float) -> str:
        # A capture can land while tmux is still taking in a frame (the top new, the bottom
        # old): a screen that shows ``done`` counts once the next capture, 50 ms later, is
        # the same. An animated screen never repeats: its latest match counts after 10.
        deadline = time.monotonic() + within
        screen, last, tries = "", "", 0
        while time.monotonic() < deadline:
            screen = self.text()
            if not done(screen):
                if tries:
                    return last  # it showed only briefly: the match seen is the answer
            elif (tries and screen == last) or tries >= 10:
                return screen
            else:
                last, tries = screen, tries + 1
            time.sleep(0.05)
        if tries:
            return last
        raise AssertionError(f"{failure}; the screen shows:\n{screen}")

    def kill(self) -> None:
        """End the session (and whatever still runs in it)."""
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, env=self.env)


def tmux_env(tmp_path: Path) -> dict[str, str]:
    """This process's environment without smith's and tmux's variables or an API key, with
    XDG dirs in ``tmp_path`` and a private tmux server (its socket in ``tmp_path``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "TMUX"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        TERM="xterm-256color",
        TMUX_TMPDIR=str(tmp_path),
    )
    env.pop("LLM_API_KEY", None)
    return env


@contextlib.contextmanager
def smith_in_tmux(
    tmp_path: Path, api_url: str, config: str = "{}", size: tuple[int, int] = (120, 36)
) -> Iterator[TmuxPane]:
    """The installed ``smith`` in a tmux pane, killed on exit: in ``tmp_path/project`` (made
    if missing), with the config file ``tmp_path/config.json`` holding ``config``, the
    database ``tmp_path/smith.db`` and :func:`tmux_env`. When smith exits the pane prints
    ``SMITH-EXIT=<code>`` and stays open."""
    if not SMITH.exists():
        pytest.fail(f"the smith script is not installed at {SMITH}; run `pip install -e .`")
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    config_path = tmp_path / "config.json"
    config_path.write_text(config, encoding="utf-8")
    command = (
        f"{SMITH} --api-url {api_url} --db {tmp_path / 'smith.db'} "
        f"--config {config_path}; echo SMITH-EXIT=$?; sleep 60"
    )
    pane = TmuxPane(command, project, tmux_env(tmp_path), size=size)
    try:
        yield pane
    finally:
        pane.kill()
