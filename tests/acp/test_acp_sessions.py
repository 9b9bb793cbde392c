"""`smith acp` driven by the ACP Python SDK's client side: session/list (titles, updatedAt,
a conversation started outside the editor too), session/resume, session/close, session/fork
from a prompt, session_info_update, the model as a config option (category model) and
usage_update after each request. The same items through the TypeScript SDK's client are in
test_acp_ts_client.py."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.acp.test_acp_agent import EditorClient, _error_of, agent
from tests.engine.test_headless_cli import smith
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo

CATALOG = {
    "object": "list",
    "data": [
        {
            "id": "vision-model",
            "context_length": 32000,
            "architecture": {"input_modalities": ["text", "image"]},
        },
        {"id": "text-model", "context_length": 16000},
    ],
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path / "repo")


def _user_texts(request: dict[str, Any]) -> list[str]:
    """The prompts a request carries (the engine's own state snapshots left out)."""
    return [
        m["content"]
        for m in request["messages"]
        if m["role"] == "user" and not str(m["content"]).startswith("[state snapshot]")
    ]


async def test_list_resume_close_fork_and_titles(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    # A conversation of the same project started outside the editor (smith -p).
    llm_server.enqueue(text_reply("from the terminal"))
    done = smith(tmp_path, repo, llm_server, "-p", "asked in the terminal")
    assert done.returncode == 0, done.stderr
    llm_server.enqueue(
        text_reply("one"), text_reply("two"), text_reply("forked answer"), text_reply("resumed")
    )
    client = EditorClient()
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("first question\nmore lines")])
        titles = [u.title for u in client.of("session_info_update")]
        assert titles == ["first question"]  # named after the first prompt, once
        await conn.prompt(session_id=sid, prompt=[text_block("second question")])
        assert [u.title for u in client.of("session_info_update")] == ["first question"]

        listed = await conn.list_sessions(cwd=str(repo))
        by_id = {s.session_id: s for s in listed.sessions}
        assert by_id[sid].title == "first question"
        assert by_id[sid].cwd == str(repo)
        stamp = dt.datetime.fromisoformat(by_id[sid].updated_at.replace("Z", "+00:00"))
        assert abs((dt.datetime.now(dt.UTC) - stamp).total_seconds()) < 600
        assert "asked in the terminal" in [s.title for s in listed.sessions]
        assert listed.sessions[0].session_id == sid  # newest first
        assert listed.next_cursor is None

        fork = await conn.fork_session(
            session_id=sid, cwd=str(repo), mcp_servers=[], smith={"beforePrompt": 2}
        )
        assert fork.session_id != sid
        assert [o.id for o in fork.config_options] == ["role", "model", "mode"]
        await conn.prompt(session_id=fork.session_id, prompt=[text_block("another second")])
        forked = llm_server.chat_requests()[-1]
        assert _user_texts(forked) == ["first question\nmore lines", "another second"]
        bad = await _error_of(
            conn.fork_session(
                session_id=sid, cwd=str(repo), mcp_servers=[], smith={"beforePrompt": 9}
            )
        )
        assert "beforePrompt must be 1 to 2" in json.dumps(bad)

        await conn.set_session_mode(session_id=sid, mode_id="auto-edit")
        await conn.close_session(session_id=sid)
        closed = await _error_of(conn.prompt(session_id=sid, prompt=[text_block("still?")]))
        assert f"no open session '{sid}'" in json.dumps(closed)
        again = await _error_of(conn.close_session(session_id=sid))
        assert "no open session" in json.dumps(again)
        # The original conversation is untouched by the fork.
        listed = await conn.list_sessions(cwd=str(repo))
        assert {s.session_id for s in listed.sessions} >= {sid, fork.session_id}

    resumed_client = EditorClient()
    async with agent(tmp_path, repo, llm_server, resumed_client) as conn:
        resumed = await conn.resume_session(cwd=str(repo), session_id=sid, mcp_servers=[])
        assert resumed.config_options[0].id == "role"
        assert resumed.modes.current_mode_id == "auto-edit"  # as the session was left
        # No replay: the client already shows the history.
        assert not resumed_client.of("user_message_chunk")
        assert not resumed_client.of("agent_message_chunk")
        await conn.prompt(session_id=sid, prompt=[text_block("third question")])
        assert resumed_client.of("available_commands_update")  # as after load
        missing = await _error_of(
            conn.resume_session(cwd=str(repo), session_id="no-such-id", mcp_servers=[])
        )
    assert "no conversation with id 'no-such-id'" in json.dumps(missing)
    assert _user_texts(llm_server.chat_requests()[-1]) == [
        "first question\nmore lines",
        "second question",
        "third question",
    ]
    assert resumed_client.message() == "resumed"
    # A resumed session is named at once (the editor lists it by its title).
    assert [u.title for u in resumed_client.of("session_info_update")] == ["first question"]


async def test_model_option_switches_the_model_and_usage_is_reported(
    tmp_path: Path, repo: Path
) -> None:
    usage = {"prompt_tokens": 1200, "completion_tokens": 34, "cost": 0.0021}
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("first", usage=usage), text_reply("second", usage=usage))
        client = EditorClient()
        async with agent(tmp_path, repo, server, client) as conn:
            session = await conn.new_session(cwd=str(repo), mcp_servers=[])
            sid = session.session_id
            model = next(o for o in session.config_options if o.id == "model")
            assert model.category == "model"
            assert [c.value for c in model.options] == ["auto", "vision-model", "text-model"]
            assert model.current_value == "auto"
            mode = next(o for o in session.config_options if o.id == "mode")
            # (The role's custom category "_smith_role" the Python SDK's model drops on
            # reading; test_acp_ts_client.py asserts it on the wire.)
            assert mode.category == "mode"

            switched = await conn.set_config_option(
                config_id="model", session_id=sid, value="text-model"
            )
            current = {o.id: o.current_value for o in switched.config_options}
            assert current["model"] == "text-model"
            await conn.prompt(session_id=sid, prompt=[text_block("hi")])
            assert server.chat_requests()[-1]["model"] == "text-model"
            first = client.of("usage_update")
            assert first, "a usage_update follows the request"
            assert first[-1].size == 16000  # text-model's context window
            assert 0 < first[-1].used <= 16000
            assert first[-1].cost.amount == 0.0021 and first[-1].cost.currency == "USD"
            assert first[-1].field_meta["smith"]["text"].endswith("· $0.0021")

            await conn.set_config_option(config_id="model", session_id=sid, value="auto")
            await conn.prompt(session_id=sid, prompt=[text_block("again")])
            assert server.chat_requests()[-1]["model"] != "text-model"
            last = client.of("usage_update")[-1]
            assert last.cost.amount == 0.0042  # the session's cost so far

            typo = await _error_of(
                conn.set_config_option(config_id="model", session_id=sid, value="txt-model")
            )
            unknown = await _error_of(
                conn.set_config_option(config_id="colour", session_id=sid, value="x")
            )
            await conn.set_config_option(config_id="mode", session_id=sid, value="yolo")
            # Changed outside set_config_option, the selectors follow: /model typed in the
            # editor, and the session mode set the older way.
            before = len(client.of("config_option_update"))
            await conn.prompt(session_id=sid, prompt=[text_block("/model vision-model")])
            await conn.set_session_mode(session_id=sid, mode_id="read-only")
            await conn.prompt(session_id=sid, prompt=[text_block("/mode")])  # flushes updates
            followed = [
                {o.id: o.current_value for o in u.config_options}
                for u in client.of("config_option_update")[before:]
            ]
    assert "the server offers no model 'txt-model'" in json.dumps(typo)
    assert "vision-model, text-model" in json.dumps(typo)
    assert "unknown option 'colour'" in json.dumps(unknown)
    assert [u.current_mode_id for u in client.of("current_mode_update")][-2:] == [
        "yolo",
        "read-only",
    ]
    assert any(f["model"] == "vision-model" and f["mode"] == "yolo" for f in followed)
    assert followed[-1]["mode"] == "read-only" and followed[-1]["model"] == "vision-model"


def test_list_pages_through_a_real_store(tmp_path: Path) -> None:
    """session/list's pages: 50 a page, newest first, the cursor the offset of the next
    page; a cursor this agent did not give is refused."""
    from smith_tui.acp.session_list import PAGE_SIZE, list_page
    from smith_tui.store import Store

    store = Store.open(str(tmp_path / "smith.db"))
    try:
        ids = [store.conversations.create("proj", f"talk {n}") for n in range(PAGE_SIZE + 7)]
        store.conversations.create("other-project", "elsewhere")
        first = list_page(store, "proj", "/work", None)
        second = list_page(store, "proj", "/work", first.next_cursor)
        with pytest.raises(ValueError, match="not a cursor this agent gave"):
            list_page(store, "proj", "/work", "not-a-number")
    finally:
        store.close()
    assert len(first.sessions) == PAGE_SIZE and first.next_cursor == str(PAGE_SIZE)
    assert len(second.sessions) == 7 and second.next_cursor is None
    listed = [s.session_id for s in first.sessions + second.sessions]
    assert sorted(listed) == sorted(ids)  # every one once, the other project's left out
    assert first.sessions[0].title.startswith("talk ")


async def test_fork_before_a_replayed_prompt_by_its_message_id(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """session/load gives each prompt its messageId (its turn); fork's beforeTurn takes it."""
    llm_server.enqueue(text_reply("one"), text_reply("two"), text_reply("other two"))
    async with agent(tmp_path, repo, llm_server, EditorClient()) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        await conn.prompt(session_id=sid, prompt=[text_block("first")])
        await conn.prompt(session_id=sid, prompt=[text_block("second")])
    loaded = EditorClient()
    async with agent(tmp_path, repo, llm_server, loaded) as conn:
        await conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[])
        prompts = {u.content.text: u.message_id for u in loaded.of("user_message_chunk")}
        assert prompts["first"] and prompts["second"] and prompts["first"] != prompts["second"]
        fork = await conn.fork_session(
            session_id=sid, cwd=str(repo), mcp_servers=[], smith={"beforeTurn": prompts["second"]}
        )
        await conn.prompt(session_id=fork.session_id, prompt=[text_block("second, again")])
        unknown = await _error_of(
            conn.fork_session(
                session_id=sid, cwd=str(repo), mcp_servers=[], smith={"beforeTurn": "nope"}
            )
        )
    assert _user_texts(llm_server.chat_requests()[-1]) == ["first", "second, again"]
    assert "the conversation has no turn 'nope'" in json.dumps(unknown)
