"""`GET /models` is retried like a chat request, and its failure leads with the cause (issue 22).

The real ``smith -p`` against the scripted server, no model configured: the catalog picks
one. A catalog answering 503 is asked again ``llm_config.retry_max_retries`` times; the
error then starts with the server's failure, not with "No model is configured". A 404
(not retryable) is asked once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.llm_server import ScriptedLLMServer
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import run_smith, server_args, smith_env


def _models_requests(server: ScriptedLLMServer) -> int:
    return sum(1 for request in server.requests if request.path.endswith("/models"))


@pytest.mark.parametrize(("status", "asked"), [(503, 3), (404, 1)])
def test_a_failing_catalog_is_retried_when_retryable_and_named_first(
    tmp_path: Path, llm_server: ScriptedLLMServer, status: int, asked: int
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    llm_server.catalog_status = status
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps({"llm_config": {"retry_max_retries": 2, "retry_backoff_ms": [10]}})
    )
    env = smith_env(tmp_path)
    env.pop("SMITH_MODEL")  # no model named anywhere: the catalog must pick one
    done = run_smith(
        ["-p", "hi", *server_args(llm_server.base_url, tmp_path / "smith.db", config)],
        cwd=repo,
        env=env,
    )
    assert done.returncode != 0
    assert _models_requests(llm_server) == asked
    assert llm_server.chat_requests() == []
    error = done.stderr[done.stderr.index("The server's model list") :]
    assert error.startswith(
        f"The server's model list (GET /models) could not be read: HTTP {status}"
    )
    assert done.stderr.index("The server's model list") < done.stderr.index("default_model")
    assert "No model is configured" not in done.stderr
    assert "Traceback" not in done.stderr
