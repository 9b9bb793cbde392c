"""The rain driven through Textual's own driver in a real pty: frames stay whole.

A small Textual app (run as a subprocess on a pseudo-terminal) writes rain frames with
``app._driver.write`` while it keeps repainting text; the bytes on the pty must hold every
frame as one unbroken save/move/graphics/restore run, and the delete last.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

APP = """
import asyncio, sys
from textual.app import App
from textual.widgets import Static
from smith_tui.widgets.rain import CellAnchor, KittyEncoder, RainAnimator, strip_layout


class Demo(App):
    def compose(self):
        yield Static("hello " * 50, id="text")

    def on_mount(self):
        self.set_timer(0.1, self.go)

    async def go(self):
        layout = strip_layout(self.size.width, 8)
        rain = RainAnimator(
            self._driver.write, layout, anchor=CellAnchor(2, 0), seed=1,
            encoder=KittyEncoder(medium=sys.argv[1]),
        )
        rain.start("#FFB000")
        for tick in range(5):
            await asyncio.sleep(0.1)
            self.query_one("#text", Static).update(f"tick {tick} " * 30)
        rain.stop()
        await rain.wait_stopped()
        self.exit(rain.frames_written)


sys.exit(0 if Demo().run() else 3)
"""

FRAME = re.compile(r"\x1b7\x1b\[3;1H(?:\x1b_G[^\x1b]*\x1b\\)+\x1b8")
COMMAND = re.compile(r"\x1b_G([^;\x1b]*)(?:;[^\x1b]*)?\x1b\\")


def _run_in_pty(script: Path, medium: str) -> tuple[int, str]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    process = subprocess.Popen(
        [sys.executable, str(script), medium],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    output = bytearray()
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the pty
                    break
                if not chunk:
                    break
                output += chunk
            elif process.poll() is not None:
                break
        returncode = process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    return returncode, output.decode("latin-1")


@pytest.mark.parametrize("medium", ["shm", "direct"])
def test_frames_written_through_the_textual_driver_arrive_whole(
    tmp_path: Path, medium: str
) -> None:
    script = tmp_path / "rain_app.py"
    script.write_text(APP)
    returncode, text = _run_in_pty(script, medium)
    assert returncode == 0, text[-2000:]
    commands = COMMAND.findall(text)
    frames = FRAME.findall(text)
    assert len(frames) >= 3
    placed = [c for c in commands if c.startswith("a=T")]
    assert len(placed) == len(frames)  # no frame was split by Textual's own output
    assert commands[-1].startswith("a=d,d=I")
    if medium == "shm":
        assert all(",t=s" in c for c in placed)
