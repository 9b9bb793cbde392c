"""`smith acp` as real editors drive it (issue 25, "Broken" 1-10), over the wire: the
real binary as a subprocess, the ACP SDK's client side, the scripted Chat-Completions
server. Raw JSON-RPC messages are recorded too, where the SDK's parsing would hide the
difference (``oldText: null``, the error of a failed ``session/prompt``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities, FileSystemCapabilities

from tests.acp.test_acp_agent import EditorClient, TerminalClient, _text
from tests.dispatch.support import dispatch, report
from tests.engine.test_headless_cli import _config
from tests.support.llm_server import (
    ScriptedLLMServer,
    ToolCall,
    http_error,
    stall,
    text_reply,
    tool_call,
)
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import SMITH, smith_env


class Wire:
    """The JSON-RPC messages smith sent, as they came over stdout."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            self.messages.append(event.message)

    def requests(self, method: str) -> list[dict[str, Any]]:
        return [m["params"] for m in self.messages if m.get("method") == method]


class WaitingClient(EditorClient):
    """An editor client that can wait for an update of a kind."""

    def __init__(self, choice: str = "allow_once") -> None:
        super().__init__(choice)
        self.arrived = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        self.arrived.set()

    async def wait_for(self, kind: str) -> list[Any]:
        while not self.of(kind):
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 30)
        return self.of(kind)


@asynccontextmanager
async def editor(
    tmp_path: Path, repo: Path, server: ScriptedLLMServer, client: EditorClient
) -> AsyncIterator[tuple[Any, Wire]]:
    """``smith acp`` started and initialised; stderr goes to a file (never a full pipe)."""
    wire = Wire()
    args = ["acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
    with _log_file(tmp_path) as stderr:
        async with spawn_agent_process(
            client,
            SMITH,
            *args,
            "--config",
            _config(tmp_path),
            cwd=repo,
            env=smith_env(tmp_path),
            transport_kwargs={"stderr": stderr},
            observers=[wire],
        ) as (conn, _process):
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(
                    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=isinstance(client, TerminalClient),
                ),
            )
            yield conn, wire


def _log_file(tmp_path: Path) -> Any:
    return (tmp_path / "acp-stderr.txt").open("ab")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return editor_repo(tmp_path / "repo")


def editor_repo(where: Path) -> Path:
    """The repository every editor scenario runs in (tests/acp/test_acp_ts_client.py's too):
    ``notes.txt`` and a file-defined ``/review`` command."""
    path = make_git_repo(where)
    (path / "notes.txt").write_text("one\ntwo\n")
    commands = path / ".smith" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file for bugs\nargument-hint: FILE\n---\nReview $ARGUMENTS\n"
    )
    return path


def _files(*places: Path) -> dict[str, bytes]:
    """Every file under (or at) ``places`` with its bytes."""
    found: dict[str, bytes] = {}
    for place in places:
        for path in [place, *sorted(place.rglob("*"))] if place.is_dir() else [place]:
            if path.is_file():
                found[str(path)] = path.read_bytes()
    return found


async def _say(conn: Any, sid: str, text: str) -> Any:
    return await conn.prompt(session_id=sid, prompt=[text_block(text)])


def _said(client: EditorClient, since: int) -> str:
    return "".join(
        u.content.text for u in client.updates[since:] if u.session_update == "agent_message_chunk"
    )


async def test_commands_in_an_editor_keep_one_conversation_and_the_users_config(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """Items 1, 6, 7 (and 9 for commands): the advertised commands, the refused ones, /help,
    /role and /config set active_role as session switches, then a reload keeping it all."""
    llm_server.enqueue(text_reply("First answer."), text_reply("Second answer."))
    user_config = tmp_path / "xdg-config"
    config_file = Path(_config(tmp_path))
    before = _files(user_config, config_file)
    client = WaitingClient()
    async with editor(tmp_path, repo, llm_server, client) as (conn, _wire):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        (advertised, *_) = await client.wait_for("available_commands_update")
        commands = {c.name: c for c in advertised.available_commands}
        assert {"help", "role", "mode", "model", "compact", "undo", "review"} <= set(commands)
        assert not {"new", "clear", "load", "quit", "pager", "inspect", "copy"} & set(commands)
        assert commands["role"].input.root.hint == "[direct|orchestrator]"
        assert commands["mode"].input is not None
        assert commands["review"].input.root.hint == "FILE"
        assert "Review a file for bugs" in commands["review"].description
        assert commands["undo"].input is None

        assert (await _say(conn, sid, "first question")).stop_reason == "end_turn"
        for typed, says in [
            ("/new", "one session is one Smith conversation"),
            ("/clear", "Start a new session in the editor"),
            ("/load abc", "session history"),
            ("/quit", "needs Smith's terminal screen"),
            ("/pager", "needs Smith's terminal screen"),
            ("/memory open 1", "open the file in the editor"),
        ]:
            start = len(client.updates)
            assert (await _say(conn, sid, typed)).stop_reason == "end_turn"
            assert says in _said(client, start), typed
        start = len(client.updates)
        await _say(conn, sid, "/help")
        shown = _said(client, start)
        assert "/role [direct|orchestrator]" in shown and "/review FILE" in shown
        assert "/quit" not in shown and "/pager" not in shown and "Keys" not in shown
        assert "ctrl+" not in shown

        await _say(conn, sid, "/role orchestrator")
        (switched,) = client.of("config_option_update")
        role = next(o for o in switched.config_options if o.id == "role")
        assert role.current_value == "orchestrator"
        start = len(client.updates)
        await _say(conn, sid, "/config set active_role direct")
        assert "this session only" in _said(client, start)
        role = next(
            o for o in client.of("config_option_update")[-1].config_options if o.id == "role"
        )
        assert role.current_value == "direct"
        start = len(client.updates)
        await _say(conn, sid, "/config unset active_role")
        assert "chosen per session" in _said(client, start)
        assert (await _say(conn, sid, "second question")).stop_reason == "end_turn"
    # The user's config files are as they were: nothing was saved for later sessions.
    assert _files(user_config, config_file) == before
    # Both turns went to the editor's one session: the model saw the first in the second.
    contents = [m.get("content") for m in llm_server.chat_requests()[-1]["messages"]]
    assert "first question" in contents and "First answer." in contents

    loaded = WaitingClient()
    async with editor(tmp_path, repo, llm_server, loaded) as (conn, _wire):
        await conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[])
    replay = [(u.session_update, _text(u)) for u in loaded.updates]
    users = [text for kind, text in replay if kind == "user_message_chunk"]
    assert users[0] == "first question" and users[-1] == "second question"
    assert "/new" in users and "/role" in users
    answers = "".join(text for kind, text in replay if kind == "agent_message_chunk")
    assert answers.index("First answer.") < answers.index("one session is one Smith")
    assert answers.index("active role: orchestrator") < answers.index("Second answer.")


def permission_script() -> tuple[tuple[ToolCall, ToolCall, ToolCall], list[Any]]:
    """The model's turn asking three permissions (write a new file, edit ``notes.txt``, run
    a command with backticks), then its answer: the calls and the replies to enqueue."""
    write = tool_call("write", {"path": "new.txt", "content": "fresh\n"})
    digest = hashlib.sha256(b"one\ntwo\n").hexdigest()
    edit = tool_call(
        "edit",
        {
            "path": "notes.txt",
            "expected_hash": digest,
            "operation": "replace",
            "start_line": 2,
            "text": "TWO",
        },
    )
    bash = tool_call("bash", {"command": "echo ```hi```"})
    return (write, edit, bash), [text_reply(tool_calls=[write, edit, bash]), text_reply("Done.")]


async def test_permission_questions_show_diffs_commands_and_the_terminal_title(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """Items 3, 4, 5: a new file's diff with ``oldText: null``, an edit's whole old and new
    text, bash's command in a fence, and the editor's terminal titled with the command."""
    (write, edit, bash), replies = permission_script()
    llm_server.enqueue(*replies)
    client = TerminalClient("allow_once")
    async with editor(tmp_path, repo, llm_server, client) as (conn, wire):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        done = await _say(conn, session.session_id, "change things")
    assert done.stop_reason == "end_turn"
    asked = {
        p["toolCall"]["toolCallId"]: p["toolCall"]
        for p in wire.requests("session/request_permission")
    }
    (new_diff, *_) = asked[write.id]["content"]
    assert new_diff["type"] == "diff" and new_diff["path"] == str(repo / "new.txt")
    assert "oldText" in new_diff and new_diff["oldText"] is None  # the key, as null
    assert new_diff["newText"] == "fresh\n"
    (edit_diff, *_) = asked[edit.id]["content"]
    assert (edit_diff["oldText"], edit_diff["newText"]) == ("one\ntwo\n", "one\nTWO\n")
    command = asked[bash.id]["content"][0]["content"]["text"]
    assert command.startswith("````sh\necho ```hi```\n````")  # a fence longer than the text's
    # The final diff of the created file carries oldText: null too.
    finals = [
        u["update"]
        for u in wire.requests("session/update")
        if u["update"].get("toolCallId") == write.id and u["update"].get("status") == "completed"
    ]
    assert finals and finals[-1]["content"][0]["oldText"] is None
    # The editor's terminal: its command line and its title are the user's command.
    ((created),) = client.created
    # Sandboxed, the terminal runs the launcher with the user's command: Toad titles a
    # terminal with its command line, and the sandbox's goes in the environment.
    assert (created["command"], created["args"]) == ("smith-sandbox", ["-c", "echo ```hi```"])
    assert json.loads(created["env"]["SMITH_SANDBOX_ARGV"])[0].endswith("bwrap")
    updates = client.call_updates(bash.id)
    embedded = next(
        i for i, u in enumerate(updates) if any(c.type == "terminal" for c in u.content or [])
    )
    assert updates[embedded + 1].title == "echo ```hi```"


def dispatch_script() -> tuple[ToolCall, list[Any]]:
    """A dispatch (its child reads ``notes.txt`` and reports), a plan, a second turn, a turn
    that stalls until it is cancelled, then a write: the dispatch call and the replies."""
    call = dispatch("explorer", "map the parser")
    child_read = tool_call("read", {"path": "notes.txt"})
    todo = tool_call("todo", {"items": [{"content": "ship it", "status": "in_progress"}]})
    write = tool_call("write", {"path": "out.txt", "content": "made\n"})
    return call, [
        text_reply(tool_calls=[call]),
        text_reply(tool_calls=[child_read]),
        text_reply(
            tool_calls=[
                report(
                    status="ok",
                    summary="The parser lives in src/parse.py.",
                    findings=["parse() is in src/parse.py"],
                    evidence=["src/parse.py:12"],
                )
            ]
        ),
        text_reply(tool_calls=[todo]),
        text_reply("Mapped."),
        text_reply("You're welcome."),
        stall(5, text_reply("never " * 20)),
        text_reply(tool_calls=[write]),
        text_reply("Wrote it."),
    ]


async def test_dispatch_plan_cancel_and_mode_show_live_and_on_reload(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """Items 2, 3 (dispatch), 8, 9: the dispatch card's final text (log and report, no
    JSON), no empty plan opening the next turn, and a reload with the child calls, the card,
    the plan, the cancelled mark, the changed files and the permission mode."""
    call, replies = dispatch_script()
    llm_server.enqueue(*replies)
    client = WaitingClient("allow_once")
    async with editor(tmp_path, repo, llm_server, client) as (conn, _wire):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        await conn.set_config_option(config_id="role", session_id=sid, value="orchestrator")
        assert (await _say(conn, sid, "where is the parser?")).stop_reason == "end_turn"
        plans_after_first = len(client.of("plan"))
        await _say(conn, sid, "thanks")
        assert len(client.of("plan")) == plans_after_first  # no empty plan opened turn 2
        turn = asyncio.create_task(_say(conn, sid, "again"))
        await llm_server.wait_for_chats_async(7)
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 30)).stop_reason == "cancelled"
        await conn.set_session_mode(session_id=sid, mode_id="auto-edit")
        await conn.set_config_option(config_id="role", session_id=sid, value="direct")
        assert (await _say(conn, sid, "write it")).stop_reason == "end_turn"

    (asked, _), *_ = client.asked  # the dispatch's question, readable
    question = _text(asked)
    assert "Dispatch **explorer** to: map the parser" in question
    assert "{'" not in question
    live = client.call_updates(call.id)[-1]
    assert live.status == "completed"
    card = _text(live)
    for line in (
        "explorer started: map the parser",
        "→ read notes.txt",
        "explorer ok: The parser lives in src/parse.py.",
        "Findings:\n- parse() is in src/parse.py",
        "Evidence:\n- src/parse.py:12",
    ):
        assert line in card
    assert '"findings"' not in card and "{" not in card
    plans = client.of("plan")
    assert plans and all(p.entries for p in plans)

    loaded = WaitingClient()
    async with editor(tmp_path, repo, llm_server, loaded) as (conn, _wire):
        response = await conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[])
    assert response.modes.current_mode_id == "auto-edit"
    reloaded = loaded.call_updates(call.id)[-1]
    assert reloaded.status == "completed" and _text(reloaded) == card
    children = [u for u in loaded.of("tool_call") if (u.field_meta or {}).get("smith")]
    assert [c.title for c in children] == ["explorer: read notes.txt", "explorer: report ok"]
    assert all(c.field_meta["smith"]["parent"] == call.id for c in children)
    (plan,) = loaded.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [("ship it", "in_progress")]
    said = loaded.message()
    assert said.index("Mapped.") < said.index("[cancelled]") < said.index("Wrote it.")
    live = "".join(u.content.text for u in client.of("agent_thought_chunk"))
    thoughts = "".join(u.content.text for u in loaded.of("agent_thought_chunk"))
    assert "this turn changed 1 file: A out.txt" in live
    assert "this turn changed 1 file: A out.txt" in thoughts


async def test_an_llm_failure_fails_the_prompt_with_its_message(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """Item 10: the LLM server's error fails ``session/prompt`` (its message in the error
    and in ``data.details``), after the message was said as text; a reload says it too."""
    llm_server.enqueue(http_error(400, {"error": {"message": "model melted", "type": "x"}}))
    client = WaitingClient()
    async with editor(tmp_path, repo, llm_server, client) as (conn, wire):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        # Switched before the conversation is stored: kept with its first turn.
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        with pytest.raises(RequestError) as failed:
            await _say(conn, session.session_id, "hello")
    error = failed.value.to_error_obj()
    assert error["code"] == -32603
    assert "model melted" in error["message"] and "model melted" in error["data"]["details"]
    (answer,) = [m for m in wire.messages if "error" in m and "id" in m]
    assert "model melted" in json.dumps(answer["error"])
    assert "smith: turn ended:" in client.message() and "model melted" in client.message()

    loaded = WaitingClient()
    async with editor(tmp_path, repo, llm_server, loaded) as (conn, _wire):
        again = await conn.load_session(
            cwd=str(repo), session_id=session.session_id, mcp_servers=[]
        )
    assert "model melted" in loaded.message()
    assert again.modes.current_mode_id == "yolo"
