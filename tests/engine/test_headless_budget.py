"""``smith -p --max-tokens N`` / ``--max-cost USD`` as a real subprocess against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine.test_headless_cli import smith
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import run_smith, smith_env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


def _calls(server: ScriptedLLMServer, n: int, tokens: int) -> None:
    server.enqueue(
        *(
            text_reply(
                tool_calls=[tool_call("bash", {"command": f"echo {i}"})],
                usage={"prompt_tokens": tokens, "completion_tokens": 0},
            )
            for i in range(n)
        ),
        text_reply("never"),
    )


def test_max_tokens_stops_the_turn(tmp_path: Path, workdir: Path, llm_server) -> None:
    _calls(llm_server, 3, 400)
    result = smith(
        tmp_path, workdir, llm_server, "-p", "go", "--max-tokens", "1000", "--output-format", "json"
    )
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == "budget_exhausted"
    assert (
        "turn tokens budget is used up: 1,200 tokens of 1,000 tokens"
        in (summary["error"]["message"])
    )
    assert summary["budget"] == {"turn_tokens": {"used": 1200.0, "limit": 1000.0}}
    assert len(llm_server.chat_requests()) == 3


def test_max_tokens_warning_and_stop_in_text_mode(
    tmp_path: Path, workdir: Path, llm_server
) -> None:
    _calls(llm_server, 3, 300)
    result = smith(tmp_path, workdir, llm_server, "-p", "go", "--max-tokens", "900")
    assert result.returncode == 1
    # 600 of 900 is 67%: no warning; 900 jumps past 80% to the limit: one warning, then
    # the stop.
    warning = (
        "smith: warning: 100% of the turn tokens budget used (900 tokens of 900 tokens, "
        "budget.turn_tokens); the limit is reached: no further request in this turn"
    )
    stop = "smith: turn ended: budget_exhausted: the turn tokens budget is used up"
    assert result.stderr.count("smith: warning:") == 1
    assert warning in result.stderr and stop in result.stderr
    assert result.stderr.index(warning) < result.stderr.index(stop)
    assert "--max-tokens N" in result.stderr
    assert "Traceback" not in result.stderr


def test_max_cost_uses_the_catalog_prices(tmp_path: Path, workdir: Path, llm_server) -> None:
    llm_server.catalog = {
        "data": [{"id": "scripted-model", "pricing": {"prompt": "0.0001", "completion": "0"}}]
    }
    _calls(llm_server, 3, 450)  # $0.045 per call
    result = smith(tmp_path, workdir, llm_server, "-p", "go", "--max-cost", "$0.10")
    assert result.returncode == 1
    # $0.09 after two calls: 90%, warned; $0.135 after three: stopped.
    assert "smith: warning: 90% of the turn cost budget used ($0.09 of $0.10" in result.stderr
    assert "the turn cost budget is used up: $0.14 of $0.10 (budget.turn_cost_usd)" in (
        result.stderr
    )
    assert len(llm_server.chat_requests()) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-tokens", "0"], "argument --max-tokens: must be more than 0 tokens"),
        (["--max-tokens", "lots"], "expected a whole number of tokens such as 50000"),
        (["--max-cost", "free"], "expected an amount in dollars such as 0.50"),
        (["--max-cost", "-1"], "must be a dollar amount above 0"),
        (["--max-cost", "nan"], "must be a dollar amount above 0"),
    ],
)
def test_bad_budget_flags_are_refused(
    tmp_path: Path, workdir: Path, llm_server, args: list[str], message: str
) -> None:
    result = smith(tmp_path, workdir, llm_server, "-p", "go", *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not llm_server.chat_requests()


def test_budget_flags_need_a_headless_prompt(tmp_path: Path, workdir: Path) -> None:
    result = run_smith(["--max-tokens", "100"], cwd=workdir, env=smith_env(tmp_path), timeout=30)
    assert result.returncode == 2
    assert "--max-tokens limits a headless turn (-p PROMPT)" in result.stderr
    assert "/config set budget.turn_tokens" in result.stderr
