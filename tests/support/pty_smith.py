"""The installed ``smith`` on a pseudo-terminal (python's ``pty``): every byte it writes
to its terminal is kept, and the test writes what a terminal would send (keys, focus
reports)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

from tests.support.smith_cli import SMITH


class PtySmith:
    """``smith`` on a pseudo-terminal: what it writes is kept, byte for byte."""

    def __init__(
        self, args: list[str], cwd: Path, env: dict[str, str], size: tuple[int, int] = (110, 30)
    ) -> None:
        """Start ``smith ARGS`` in ``cwd`` with ``env`` on a new pty of ``size`` (columns,
        rows); the side panes show from 100 columns."""
        self.master, slave = pty.openpty()
        columns, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            [SMITH, *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env
        )
        os.close(slave)
        self.output = bytearray()

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.output += os.read(self.master, 65536)
            except OSError:  # the child closed the pty
                pass

    def wait_for(self, needle: bytes, since: int = 0, within: float = 20.0) -> int:
        """Read until ``needle`` appears after offset ``since``; where it starts."""
        deadline = time.monotonic() + within
        while (found := self.output.find(needle, since)) < 0:
            if time.monotonic() > deadline or self.process.poll() is not None:
                self._read(0.1)  # what an exited smith wrote last
                if (found := self.output.find(needle, since)) >= 0:
                    return found
                tail = bytes(self.output[-1500:])
                raise AssertionError(f"{needle!r} did not arrive; the output ends {tail!r}")
            self._read(0.1)
        return found

    def send(self, data: bytes) -> int:
        """Write ``data`` to smith's terminal; the output offset at that moment."""
        self._read(0)
        os.write(self.master, data)
        return len(self.output)

    def close(self) -> None:
        """Kill smith if it still runs; close the terminal."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        os.close(self.master)
