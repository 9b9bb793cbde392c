"""Search everywhere: the ``history_search`` tool in a scripted turn, its bounds, and the
headless ``smith search`` over a real store."""

from __future__ import annotations

import json
from pathlib import Path

from smith_tui.store import Store
from smith_tui.store.project_identity import discover_project
from smith_tui.tools.builtin.history_search import MAX_LIMIT
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime
from tests.support.smith_cli import run_smith, smith_env


def _tool_messages(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_the_model_finds_how_an_earlier_session_of_this_project_went(
    tmp_path: Path,
) -> None:
    with ScriptedLLMServer() as server:
        server.enqueue(text_reply("The flaky fixture was fixed by giving each test its tmp_path."))
        runtime, _ = open_runtime(tmp_path, server.base_url)
        await runtime.submit("why is the fixture flaky?")
        earlier = runtime.conversation_id
        # Another project's session says the same words: it must not be offered.
        foreign = runtime.store.conversations.create("0123456789abcdef", title="elsewhere")
        runtime.store.conversations.append_messages(
            foreign, [{"role": "assistant", "content": "flaky fixture secret of another project"}]
        )
        await runtime.submit("/new")
        server.enqueue(
            text_reply(tool_calls=[tool_call("history_search", {"query": "flaky fixture"})]),
            text_reply("We used tmp_path last time."),
        )
        await runtime.submit("how did we solve the flaky fixture before?")
        bodies = server.chat_requests()
        await runtime.aclose()
    (result,) = _tool_messages(bodies[-1])
    assert earlier in result and "tmp_path" in result
    assert "another project" not in result and foreign not in result
    # The earlier session's question and answer; not the asking conversation's own prompt.
    assert "2 matches" in result and "before?" not in result


async def test_arguments_are_checked_and_results_cut_to_the_budget(tmp_path: Path) -> None:
    with ScriptedLLMServer() as server:
        config = {"services": {"tool": {"history_search": {"max_output_chars": 900}}}}
        runtime, _ = open_runtime(tmp_path, server.base_url, config=config)
        conv = runtime.store.conversations.create(runtime.project_id, title="many")
        runtime.store.conversations.append_messages(
            conv, [{"role": "user", "content": f"needle number {n} " + "x" * 80} for n in range(60)]
        )
        server.enqueue(
            text_reply(
                tool_calls=[
                    tool_call("history_search", {"query": "needle", "limit": MAX_LIMIT + 1}),
                    tool_call("history_search", {"query": "needle", "limit": MAX_LIMIT}),
                ]
            ),
            text_reply("done"),
        )
        await runtime.submit("find the needles")
        bodies = server.chat_requests()
        await runtime.aclose()
    refused, cut = _tool_messages(bodies[-1])
    assert "limit" in refused and str(MAX_LIMIT) in refused
    assert len(cut) <= 900 + 200 and "50 matches" in cut and "narrow the query" in cut


def _seed(db: Path, project: str, title: str, text: str) -> str:
    with Store.open(db) as store:
        conv = store.conversations.create(project, title=title)
        store.conversations.append_messages(conv, [{"role": "assistant", "content": text}])
    return conv


def test_smith_search_is_project_scoped_unless_all(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    db = tmp_path / "smith.db"
    mine = _seed(db, discover_project(repo).project_id, "fix the deploy", "deploy fixed by a retry")
    other = _seed(db, "fedcba9876543210", "other repo", "deploy broke \x1b]52;c;AAAA\x07 there")
    env = smith_env(tmp_path)
    done = run_smith(["search", "deploy", "--db", str(db)], cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    assert mine in done.stdout and "fix the deploy" in done.stdout and other not in done.stdout
    done = run_smith(["search", "deploy", "--all", "--json", "--db", str(db)], cwd=repo, env=env)
    body = json.loads(done.stdout)
    assert {hit["conversation_id"] for hit in body["hits"]} == {mine, other}
    done = run_smith(["search", "deploy", "--all", "--db", str(db)], cwd=repo, env=env)
    assert (
        other in done.stdout and "\x1b" not in done.stdout
    )  # stored text cannot drive the terminal
    done = run_smith(["search", "nothinglikethis", "--db", str(db)], cwd=repo, env=env)
    assert done.returncode == 1 and "No stored message matches" in done.stdout
    done = run_smith(["search", "x", "--db", str(tmp_path / "absent.db")], cwd=repo, env=env)
    assert done.returncode == 2 and "no database" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "absent.db").exists()
