"""`smith acp` as a real subprocess, driven by the ACP SDK's client side against the
scripted Chat-Completions server: sessions, streamed tool calls with diffs and locations,
permission questions answered by the client, the editor's buffers as the files, the
editor's terminals running bash, a dispatched sub-agent's nested updates, cancel mid-turn,
and a session loaded again (in a new process, and continued by `smith -p --resume`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    McpServerStdio,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.dispatch.support import dispatch, report
from tests.engine.test_headless_cli import _config, smith
from tests.mcp.support import time_server
from tests.support.llm_server import ScriptedLLMServer, stall, text_reply, tool_call
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import SMITH, smith_env


class EditorClient:
    """An ACP client like an editor: records updates, answers permission questions with
    ``choice``, serves ``buffers`` (unsaved text) before the disk and writes files."""

    def __init__(self, choice: str = "allow_once") -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.choice = choice
        self.buffers: dict[str, str] = {}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        if self.choice == "dismiss":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        chosen = next(o.option_id for o in options if o.kind == self.choice)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        await asyncio.to_thread(Path(path).write_text, content, encoding="utf-8")
        return WriteTextFileResponse()

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def message(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))

    def call_updates(self, call_id: str) -> list[Any]:
        return [u for u in self.updates if getattr(u, "tool_call_id", None) == call_id]


class _Terminal:
    """A command the test editor runs for the agent: a real subprocess, output merged."""

    def __init__(self, process: asyncio.subprocess.Process, limit: int | None) -> None:
        self.process = process
        self.limit = limit
        self.output = b""
        self.truncated = False
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                self.output, self.truncated = self.output[-self.limit :], True

    def status(self) -> TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return TerminalExitStatus(signal=signal.Signals(-code).name)
        return TerminalExitStatus(exit_code=code)


class TerminalClient(EditorClient):
    """An editor that offers terminals: runs each command locally and records every
    ``terminal/*`` call as ``(method, terminal id)``."""

    def __init__(self, choice: str = "allow_once") -> None:
        super().__init__(choice)
        self.terminals: dict[str, _Terminal] = {}
        self.created: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str]] = []
        self.started = asyncio.Event()

    async def create_terminal(
        self,
        command: str,
        session_id: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={item.name: item.value for item in env or []},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = _Terminal(process, output_byte_limit)
        self.created.append(
            {
                "command": command,
                "args": args,
                "env": {item.name: item.value for item in env or []},
                "cwd": cwd,
                "limit": output_byte_limit,
            }
        )
        self.calls.append(("create", terminal_id))
        self.started.set()
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.calls.append(("output", terminal_id))
        terminal = self.terminals[terminal_id]
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", "replace"),
            truncated=terminal.truncated,
            exit_status=terminal.status(),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(("wait_for_exit", terminal_id))
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        await terminal.reader
        status = terminal.status()
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self.calls.append(("kill", terminal_id))
        process = self.terminals[terminal_id].process
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.calls.append(("release", terminal_id))
        return ReleaseTerminalResponse()

    def methods(self) -> list[str]:
        """The ``terminal/*`` methods called, in order, repeated output polls folded."""
        names: list[str] = []
        for method, _ in self.calls:
            if not (method == "output" and names and names[-1] == "output"):
                names.append(method)
        return names


@asynccontextmanager
async def agent(
    tmp_path: Path,
    repo: Path,
    server: ScriptedLLMServer,
    client: EditorClient,
    **env: str,
) -> AsyncIterator[Any]:
    args = ["acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
    async with spawn_agent_process(
        client,
        SMITH,
        *args,
        "--config",
        _config(tmp_path),
        cwd=repo,
        env=smith_env(tmp_path, **env),
        # The SDK waits 2 s for the agent to exit after stdin closes, then terminates it;
        # on a loaded machine smith (stopping its MCP servers) can exit in that very
        # moment, and the SDK's terminate then raises ProcessLookupError. Wait for the exit.
        transport_kwargs={"shutdown_timeout": 30.0},
    ) as (conn, process):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=isinstance(client, TerminalClient),
            ),
        )
        assert init.agent_capabilities.load_session is True
        yield conn
    assert process.returncode is not None


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = make_git_repo(tmp_path / "repo")
    (path / "notes.txt").write_text("saved on disk\n")
    return path


async def test_prompt_streams_tool_calls_asks_permission_and_uses_editor_buffers(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    read = tool_call("read", {"path": "notes.txt"})
    write = tool_call("write", {"path": "out.txt", "content": "hello\n"})
    llm_server.enqueue(
        text_reply("Let me look.", reasoning="thinking it over", tool_calls=[read, write]),
        text_reply(
            tool_calls=[
                tool_call("todo", {"items": [{"content": "ship", "status": "in_progress"}]})
            ]
        ),
        text_reply("Done."),
    )
    client = EditorClient("allow_once")
    client.buffers[str(repo / "notes.txt")] = "unsaved buffer text\n"
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        assert session.modes.current_mode_id == "ask"
        assert [m.id for m in session.modes.available_modes] == [
            "read-only",
            "ask",
            "auto-edit",
            "yolo",
            "plan",
        ]
        assert session.config_options[0].id == "role"
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])

    assert done.stop_reason == "end_turn"
    assert client.message() == "Let me look.Done."
    assert "thinking it over" in "".join(u.content.text for u in client.of("agent_thought_chunk"))
    starts = {u.tool_call_id: u for u in client.of("tool_call")}
    assert starts[read.id].kind == "read" and starts[read.id].title == "read notes.txt"
    assert starts[read.id].locations[0].path == str(repo / "notes.txt")
    assert starts[write.id].kind == "edit"
    # The model read the editor's unsaved buffer, not the disk.
    tool_messages = [m for m in llm_server.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert "unsaved buffer text" in tool_messages[0]["content"]
    assert str(repo / "notes.txt") in client.reads
    # The write asked first (mode ask), through the client, about the started call.
    ((asked_call, options),) = client.asked
    assert asked_call.tool_call_id == write.id
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert client.writes == [(str(repo / "out.txt"), "hello\n")]
    assert (repo / "out.txt").read_text() == "hello\n"
    final = client.call_updates(write.id)[-1]
    assert final.status == "completed"
    diff = next(c for c in final.content if c.type == "diff")
    assert (diff.path, diff.old_text, diff.new_text) == (str(repo / "out.txt"), None, "hello\n")
    assert client.call_updates(read.id)[-1].status == "completed"
    (plan,) = client.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [("ship", "in_progress")]


async def test_dispatch_shows_as_a_tool_call_with_nested_updates(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    call = dispatch("explorer", "map the parser")
    findings = {
        "status": "ok",
        "summary": "The parser lives in src/parse.py.",
        "findings": ["parse() is in src/parse.py"],
        "evidence": ["src/parse.py:12"],
    }
    child_read = tool_call("read", {"path": "notes.txt"})
    llm_server.enqueue(
        text_reply(tool_calls=[call]),
        text_reply(tool_calls=[child_read]),
        text_reply(tool_calls=[report(**findings)]),
        text_reply("The explorer mapped it."),
    )
    client = EditorClient("allow_always")
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        options = await conn.set_config_option(
            config_id="role", session_id=session.session_id, value="orchestrator"
        )
        assert options.config_options[0].current_value == "orchestrator"
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("where?")])

    assert done.stop_reason == "end_turn"
    assert client.message() == "The explorer mapped it."
    ((asked_call, _),) = client.asked  # dispatch asks in mode ask; allowed for the session
    assert asked_call.tool_call_id == call.id
    updates = client.call_updates(call.id)
    nested = [u for u in updates if (u.field_meta or {}).get("smith", {}).get("job_id")]
    assert nested, "the dispatch call carries the job's updates"
    job_id = nested[0].field_meta["smith"]["job_id"]
    log = [u for u in nested if u.content][-1].content[0].content.text
    assert "explorer started: map the parser" in log
    assert "→ read notes.txt" in log
    assert "explorer ok: The parser lives in src/parse.py." in log
    assert "- parse() is in src/parse.py" in log
    assert updates[-1].status == "completed"
    # The child's own call shows as a tool call linked to the dispatch.
    child = next(u for u in client.of("tool_call") if u.tool_call_id == f"{job_id}/{child_read.id}")
    assert child.title == "explorer: read notes.txt"
    assert child.field_meta["smith"]["parent"] == call.id
    grants = _conversation(tmp_path, session.session_id).metadata["permission_grants"]
    assert grants == ["dispatch(explorer)"]


async def test_dismissed_permission_is_a_refusal_and_modes_switch(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    write = tool_call("write", {"path": "out.txt", "content": "x\n"})
    llm_server.enqueue(text_reply(tool_calls=[write]), text_reply("Could not write."))
    client = EditorClient("dismiss")
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("write it")])
        await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
        bad = await _error_of(conn.set_session_mode(session_id=session.session_id, mode_id="x"))
    assert not (repo / "out.txt").exists()
    assert client.call_updates(write.id)[-1].status == "failed"
    result = [m for m in llm_server.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert "the user denied this call" in result[0]["content"]
    assert [u.current_mode_id for u in client.of("current_mode_update")] == ["yolo"]
    assert "unknown permission mode 'x'" in json.dumps(bad)


async def test_cancel_mid_turn_then_load_replays_the_same_history(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    bash = tool_call("bash", {"command": "echo hi"})
    llm_server.enqueue(
        text_reply(tool_calls=[bash]),
        text_reply("It printed hi."),
        stall(2, text_reply("never finished " * 50)),
    )
    client = EditorClient("allow_once")
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        first = await conn.prompt(session_id=sid, prompt=[text_block("say hi")])
        assert first.stop_reason == "end_turn"
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("again")]))
        await llm_server.wait_for_chats_async(3)
        await conn.cancel(session_id=sid)
        second = await asyncio.wait_for(turn, 30)
    assert second.stop_reason == "cancelled"
    shown = client.updates

    loaded = EditorClient()
    async with agent(tmp_path, repo, llm_server, loaded) as conn:
        response = await conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[])
        assert response.modes.current_mode_id == "ask"
        missing = await _error_of(
            conn.load_session(cwd=str(repo), session_id="no-such-id", mcp_servers=[])
        )
    assert "no conversation with id 'no-such-id'" in json.dumps(missing)
    replay = [(u.session_update, _text(u)) for u in loaded.updates]
    assert ("user_message_chunk", "say hi") in replay
    assert ("user_message_chunk", "again") in replay
    assert ("agent_message_chunk", "It printed hi.") in replay
    # The same tool call, by id, with the same title and its result.
    live = next(u for u in shown if u.session_update == "tool_call")
    again = next(u for u in loaded.updates if u.session_update == "tool_call")
    assert (again.tool_call_id, again.title, again.kind) == (bash.id, live.title, "execute")
    assert "hi" in _text(loaded.call_updates(bash.id)[-1])

    # The conversation continues in smith itself.
    llm_server.enqueue(text_reply("Continued."))
    done = smith(tmp_path, repo, llm_server, "-p", "and now?", "--resume", sid)
    assert done.returncode == 0, done.stderr
    contents = [m.get("content") for m in llm_server.chat_requests()[-1]["messages"]]
    assert "say hi" in contents and "It printed hi." in contents


def _text(update: Any) -> str:
    content = getattr(update, "content", None)
    if isinstance(content, list):
        return "".join(getattr(c.content, "text", "") for c in content if c.type == "content")
    return getattr(content, "text", "") if content is not None else ""


async def _error_of(call: Any) -> dict[str, Any]:
    from acp import RequestError

    try:
        await call
    except RequestError as exc:
        return exc.to_error_obj()
    raise AssertionError("the request succeeded")


def _conversation(tmp_path: Path, conversation_id: str) -> Any:
    from smith_tui.store import Store

    store = Store.open(str(tmp_path / "smith.db"))
    try:
        return store.conversations.get(conversation_id)
    finally:
        store.close()


def test_stdout_carries_only_protocol_messages(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    """Raw JSON-RPC lines in, every stdout line a JSON-RPC message out (a turn with a
    tool call and a `/command` typed in the editor included); logs go to stderr."""
    import subprocess

    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": "echo from-bash"})]),
        text_reply("Done."),
    )
    args = ["acp", "--api-url", llm_server.base_url, "--db", str(tmp_path / "smith.db")]
    env = {**smith_env(tmp_path), "SMITH_ACP_LOG": "info"}
    with subprocess.Popen(
        [SMITH, *args, "--config", _config(tmp_path), "--permission-mode", "yolo"],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        lines: list[dict[str, Any]] = []

        def request(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
            process.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
            while True:
                line = process.stdout.readline()  # type: ignore[union-attr]
                assert line, "smith acp closed stdout"
                lines.append(json.loads(line))
                if lines[-1].get("id") == id_:
                    return lines[-1]

        request(1, "initialize", {"protocolVersion": PROTOCOL_VERSION})
        sid = request(2, "session/new", {"cwd": str(repo), "mcpServers": []})["result"]["sessionId"]
        done = request(
            3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go"}]}
        )
        status = request(
            4, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "/mode"}]}
        )
        process.stdin.close()
        stderr = process.stderr.read() if process.stderr else ""
        assert process.wait(timeout=30) == 0
    assert done["result"]["stopReason"] == "end_turn"
    assert status["result"]["stopReason"] == "end_turn"
    assert all(m.get("jsonrpc") == "2.0" for m in lines)
    updates = [m["params"]["update"] for m in lines if m.get("method") == "session/update"]
    chunks = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert "Done." in "".join(chunks)
    assert "yolo" in chunks[-1]  # /mode answers with the mode in effect
    bash_result = [u for u in updates if u["sessionUpdate"] == "tool_call_update"][-1]
    assert "from-bash" in json.dumps(bash_result)
    assert "smith acp: INFO" in stderr


async def test_the_clients_mcp_servers_are_started_for_the_session(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    call = tool_call("mcp__editor-time__get_current_time", {"timezone": "Europe/Paris"})
    llm_server.enqueue(text_reply(tool_calls=[call]), text_reply("It is late."))
    client = EditorClient("allow_once")
    server = time_server()
    given = McpServerStdio(
        name="editor time", command=server["command"], args=server["args"], env=[]
    )
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[given])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("time?")])
    assert done.stop_reason == "end_turn"
    ((asked_call, _),) = client.asked  # MCP tools ask first in mode ask
    assert asked_call.tool_call_id == call.id
    result = [m for m in llm_server.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert json.loads(result[0]["content"])["timezone"] == "Europe/Paris"


SECRET = "sk-terminal-test-secret-0123456789"


async def test_bash_runs_in_the_editors_terminal_embedded_in_its_tool_call(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    bash = tool_call("bash", {"command": "echo out-line; echo err-line >&2; exit 3"})
    llm_server.enqueue(text_reply(tool_calls=[bash]), text_reply("It exited 3."))
    client = TerminalClient("allow_once")
    async with agent(tmp_path, repo, llm_server, client, LLM_API_KEY=SECRET) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])

    assert done.stop_reason == "end_turn"
    # The permission gate ran first, as for a local bash.
    ((asked_call, _),) = client.asked
    assert asked_call.tool_call_id == bash.id
    ((created),) = client.created
    assert created["cwd"] == str(repo)
    assert created["args"][-2:] == ["-c", "echo out-line; echo err-line >&2; exit 3"]
    assert created["limit"] and created["limit"] > 0
    assert "LLM_API_KEY" not in created["env"] and SECRET not in json.dumps(created["env"])
    assert created["env"]["PATH"]  # the command still gets smith's environment otherwise
    methods = client.methods()
    assert methods[0] == "create" and methods[-1] == "release"
    assert "wait_for_exit" in methods and "output" in methods and "kill" not in methods
    # The model's next request has the terminal's output and exit code.
    (result,) = [m for m in llm_server.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert result["content"].startswith("exit code: 3")
    assert "out-line" in result["content"] and "err-line" in result["content"]
    # The tool call embeds the terminal, live and at the end.
    terminal_id = client.calls[0][1]
    updates = client.call_updates(bash.id)
    embedded = [u for u in updates if any(c.type == "terminal" for c in u.content or [])]
    assert embedded[0] is not updates[-1] and embedded[0].status is None  # while it runs
    final = updates[-1]
    assert final.status == "completed"  # the command ran; its exit code says how it went
    refs = [c.terminal_id for c in final.content if c.type == "terminal"]
    assert refs == [terminal_id]
    assert _text(final) == "exit code: 3"  # the terminal shows the output, not the text too
    # No live text replaced the terminal while it ran.
    assert not [u for u in updates[updates.index(embedded[0]) + 1 : -1] if u.content]


async def test_cancel_kills_the_editors_terminal(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    bash = tool_call("bash", {"command": "echo started; sleep 30"})
    llm_server.enqueue(text_reply(tool_calls=[bash]))
    client = TerminalClient("allow_once")
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("wait")]))
        await asyncio.wait_for(client.started.wait(), 30)
        terminal_id = client.calls[0][1]
        process = client.terminals[terminal_id].process
        await conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(turn, 30)
        await asyncio.wait_for(process.wait(), 10)

    assert cancelled.stop_reason == "cancelled"
    assert process.returncode == -signal.SIGKILL  # killed, long before its sleep ended
    assert ("kill", terminal_id) in client.calls
    assert client.calls[-1] == ("release", terminal_id)
