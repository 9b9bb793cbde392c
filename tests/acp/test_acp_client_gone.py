"""An editor that goes away mid-session (closes the pipes while `smith acp` still has
messages to send) ends `smith acp` quietly: exit 0, no traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.llm_server import ScriptedLLMServer
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import SMITH, smith_env


def _request(number: int, method: str, params: dict) -> bytes:
    body = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
    return (json.dumps(body) + "\n").encode()


def test_the_editor_closing_its_pipes_ends_smith_acp_without_a_traceback(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    with ScriptedLLMServer() as server:
        proc = subprocess.Popen(
            [SMITH, "acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")],
            cwd=repo,
            env=smith_env(tmp_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_request(1, "initialize", {"protocolVersion": 1}))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1
        # A new session: its answer and the commands update follow; nobody reads them.
        params = {"cwd": str(repo), "mcpServers": []}
        proc.stdin.write(_request(2, "session/new", params))
        proc.stdin.flush()
        while json.loads(proc.stdout.readline()).get("id") != 2:
            pass
        # The editor leaves as soon as it has its session: the commands update smith sends
        # after the answer meets closed pipes.
        proc.stdout.close()
        proc.stdin.close()
        code = proc.wait(timeout=60)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert "Traceback" not in stderr, stderr
    assert code == 0, stderr
