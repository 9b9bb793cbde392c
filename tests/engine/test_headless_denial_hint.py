"""`smith -p`'s refusal of a call that would ask names only ways that let that call run.

Each way the refusal offers (a rule for ``permissions.allow``, a ``--permission-mode``)
is then tried in a new run, which must run the very call; a mode it does not offer must
not (issue 22: ``auto-edit`` was offered for ``bash``, which it still asks about).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from smith_tui.cli import EXIT_DENIED
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import run_smith, server_args, smith_env

COMMAND = "echo ran > ran.txt"
MODES = ("auto-edit", "yolo")


def _run(tmp_path: Path, repo: Path, server: ScriptedLLMServer, name: str, *args: str, config=None):
    server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": COMMAND})]), text_reply("Done.")
    )
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"llm_config": {"retry_backoff_ms": [10]}, **(config or {})}))
    db = tmp_path / f"{name}.db"
    return run_smith(
        ["-p", "go", *args, *server_args(server.base_url, db, path)],
        cwd=repo,
        env=smith_env(tmp_path),
    )


def test_every_way_the_refusal_offers_runs_the_call_and_no_other_mode_is_offered(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    denied = _run(tmp_path, repo, llm_server, "ask", "--permission-mode", "ask")
    assert denied.returncode == EXIT_DENIED, denied.stderr
    assert not (repo / "ran.txt").exists()
    assert "nobody can be asked here. To allow it" in denied.stderr
    rule = re.search(r"add (bash\(.+?\)) to permissions\.allow", denied.stderr)
    assert rule is not None, denied.stderr
    offered = set(re.findall(r"use --permission-mode ([\w-]+)", denied.stderr))
    assert offered, denied.stderr

    allowed = _run(
        tmp_path,
        repo,
        llm_server,
        "rule",
        "--permission-mode",
        "ask",
        config={"permissions": {"allow": [rule.group(1)]}},
    )
    assert allowed.returncode == 0, allowed.stderr
    assert (repo / "ran.txt").exists()
    (repo / "ran.txt").unlink()

    for mode in MODES:
        done = _run(tmp_path, repo, llm_server, mode, "--permission-mode", mode)
        ran = (repo / "ran.txt").exists()
        if mode in offered:
            assert done.returncode == 0 and ran, (mode, done.stderr)
        elif mode == "auto-edit":  # not offered: because it would refuse this call too
            assert done.returncode == EXIT_DENIED and not ran, (mode, done.stderr)
        (repo / "ran.txt").unlink(missing_ok=True)
