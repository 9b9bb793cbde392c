"""``smith -p`` whose stdout is read slowly: the turn waits for its reader, it does not
take the time its own writes were blocked for a server that went silent."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.reliability.support import write_config
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import server_args, smith_env

SMITH_MAIN = "import sys\nfrom smith_tui.cli import main\nsys.exit(main(sys.argv[1:]))\n"
MIB = 1024 * 1024
TEXT = "0123456789abcdef" * (3 * MIB // 32)
"""Deltas of 1 MiB and 0.5 MiB (within the 2,000,000 characters one reply keeps): the first
is one write the pipe cannot take, the second still to be read from the server while the
first waits for the reader."""
READ = 8 * 1024
PACE_S = 0.02
"""The reader takes 8 KiB every 20 ms (400 KB/s): writing 1 MiB into the 64 KiB pipe blocks
for about 2.5 s, longer than the 1 s stall limit (and longer still on a loaded machine)."""


def test_slow_stdout_reader_is_not_a_stalled_server(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    config = write_config(tmp_path, {"llm_config": {"stream_stall_timeout": 1}})
    llm_server.enqueue(text_reply(TEXT + "\nEND", chunk_chars=MIB))
    err_path = tmp_path / "stderr.txt"
    with err_path.open("wb") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                *("-c", SMITH_MAIN, "-p", "say a lot"),
                *server_args(llm_server.base_url, tmp_path / "smith.db", config),
            ],
            cwd=repo,
            env={**smith_env(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        assert proc.stdout is not None
        received = bytearray()
        try:
            while piece := os.read(proc.stdout.fileno(), READ):
                received += piece
                time.sleep(PACE_S)  # the slow reader is the scenario, not a wait
            code = proc.wait(timeout=60)
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
    stderr = err_path.read_text(errors="replace")
    assert code == 0, stderr[-2000:]
    assert "no data from the server" not in stderr
    assert received.decode() == TEXT + "\nEND\n"
