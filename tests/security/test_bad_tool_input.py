"""Bad input ends with a tool error, never a dead turn (issue 20, section ``input``).

A prompt-injected model chooses every byte of its reply. Each attack here is a real turn
against the scripted Chat-Completions server: a NUL in every string argument of every
tool, arguments nested 100,000 deep (as JSON and as a string holding JSON), a stream chunk
nested as deep, a 200 MB reply (through the real ``smith -p`` process, its peak memory
read), a tool call whose arguments pass the per-reply cap, and 10,000 tool calls in one
reply. Each must end normally or with a clear error, leave a transcript a strict provider
accepts (``tests.support.strict``), and let the next user message work. The controls show
the raw failure each defence stands in front of.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from smith_tui.llm.nesting import MAX_JSON_DEPTH
from smith_tui.llm.stream import MAX_MESSAGE_CHARS, StreamAssembler
from smith_tui.tools.args import check_argument_values
from smith_tui.tools.spec import ToolError
from tests.reliability.support import has_traceback, run_inprocess, write_config
from tests.support.llm_script import DONE
from tests.support.llm_server import Reply, ScriptedLLMServer, raw_sse, text_reply, tool_call
from tests.support.runtime import make_git_repo, open_runtime
from tests.support.smith_cli import server_args, smith_env
from tests.support.strict import stored_wire, strict_problems

SECTION = "input"
DEPTH = 100_000
DEEP = "[" * DEPTH + "]" * DEPTH
NEXT = {"role": "user", "content": "next question"}


def _valid_after(db: Path, server: ScriptedLLMServer) -> list[str]:
    """What a strict provider would refuse: in the stored transcript followed by the next
    user message, and in the last request the server received."""
    problems = strict_problems([*stored_wire(db), NEXT])
    last = server.chat_requests()[-1]
    problems += [f"last request: {p}" for p in strict_problems(last["messages"])]
    return problems


async def _turns(
    tmp_path: Path,
    server: ScriptedLLMServer,
    first: Reply,
    *,
    role: str = "direct",
    config: dict[str, Any] | None = None,
) -> tuple[Any, Any, list[dict[str, Any]], Path]:
    """Two real turns in one runtime: ``first`` answers the opening message (then a text
    reply), the second turn is the next user message. Returns both results, the messages
    and the project folder."""
    repo = make_git_repo(tmp_path / "repo")
    server.enqueue(first, text_reply("Noted."), text_reply("Next answer."))
    runtime, _ = open_runtime(tmp_path, server.base_url, cwd=repo, config=config, record=False)
    try:
        runtime.conversations.new()
        result = await runtime.run_turn("use the tools", role=role)
        following = await runtime.run_turn("next question", role=role)
        messages = list(runtime.conversations.messages)
    finally:
        await runtime.aclose()
    return result, following, messages, repo


def _answers(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each tool result's content, by the id of the call it answers."""
    return {
        str(m.get("tool_call_id")): str(m.get("content") or "")
        for m in messages
        if m.get("role") == "tool"
    }


# ------------------------------------------------------------------ NUL in string arguments

NUL = "a\x00b"

NUL_CASES: list[tuple[str, str, dict[str, Any]]] = [
    # (role, tool, arguments with every other required argument valid)
    ("direct", "read", {"path": NUL}),
    ("direct", "write", {"path": NUL, "content": "x"}),
    ("direct", "write", {"path": "nul.txt", "content": NUL}),
    *(
        ("direct", "edit", {**edit, key: NUL})
        for edit in [
            {
                "path": "README.md",
                "expected_hash": "0" * 64,
                "operation": "replace",
                "start_line": 1,
                "text": "x",
            }
        ]
        for key in ("path", "expected_hash", "operation", "text")
    ),
    ("direct", "bash", {"command": "echo a\x00b"}),
    ("direct", "code_grep", {"pattern": NUL}),
    ("direct", "code_grep", {"pattern": "demo", "path": NUL}),
    ("direct", "code_grep", {"pattern": "demo", "glob": NUL}),
    ("direct", "code_grep", {"pattern": "demo", "glob": ["*.md", NUL]}),
    ("direct", "code_files", {"query": NUL}),
    ("direct", "code_map", {"path": NUL}),
    ("direct", "code_outline", {"path": NUL}),
    ("direct", "code_symbols", {"name": NUL}),
    ("direct", "code_symbols", {"name": "x", "kind": NUL}),
    ("orchestrator", "git", {"command": NUL}),
    ("orchestrator", "git", {"command": "log", "args": ["--oneline", NUL]}),
    ("direct", "note", {"action": NUL}),
    *(("direct", "note", {"action": "write", "id": "k", key: NUL}) for key in ("id", "content")),
    ("direct", "note", {"action": "search", "query": NUL}),
    ("direct", "note", {"action": "list", "prefix": NUL}),
    ("direct", "record", {"key": NUL, "value": "v"}),
    ("direct", "record", {"key": "k", "value": NUL}),
    ("direct", "recall", {"key": NUL}),
    ("direct", "todo", {"items": [{"content": NUL, "status": "pending"}]}),
    ("direct", "web_fetch", {"url": "https://example.com/a\x00b"}),
    ("direct", "web_search", {"query": NUL}),
    ("direct", "dispatch", {"target_role": NUL, "task": "t", "context": {}}),
    ("direct", "dispatch", {"target_role": "worker", "task": NUL, "context": {}}),
    ("direct", "dispatch", {"target_role": "worker", "task": "t", "context": {"k": NUL}}),
    ("direct", "dispatch", {"target_role": "worker", "task": "t", "context": {}, "files": [NUL]}),
    ("direct", "dispatch", {"target_role": "worker", "task": "t", "context": {}, "model": NUL}),
    ("worker", "report", {"status": NUL, "summary": "s"}),
    ("worker", "report", {"status": "done", "summary": NUL}),
    ("worker", "report", {"status": "failed", "summary": "s", "error": NUL}),
    *(
        ("worker", "report", {"status": "done", "summary": "s", key: ["ok", NUL]})
        for key in ("changes", "verification", "findings", "evidence", "limitations")
    ),
    ("direct", "read", {NUL: "README.md"}),
    ("direct", "history_search", {"query": NUL}),
    ("direct", "worktree", {"action": NUL}),
    ("direct", "worktree", {"action": "drop", "job_id": NUL}),
]


def _nul_where(value: Any, here: str = "") -> str | None:
    """The argument path of the NUL in ``value`` (``glob[1]``, ``context.k``), or None."""
    if isinstance(value, str):
        return here if "\x00" in value else None
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        if any("\x00" in key for key in value):
            return "argument name"
        items = [(f"{here}.{k}" if here else k, v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(f"{here}[{i}]", v) for i, v in enumerate(value)]
    for path, item in items:
        found = _nul_where(item, path)
        if found:
            return found
    return None


def _top(where: str | None) -> str:
    assert where is not None
    return where.split("[")[0].split(".")[0]


def _string_arguments(schema: Mapping[str, Any]) -> set[str]:
    """The top-level arguments of a tool schema that are or hold strings."""
    names = set()
    for name, prop in (schema.get("properties") or {}).items():
        text = json.dumps(prop)
        if '"string"' in text or prop.get("type") in ("object", "array"):
            names.add(name)
    return names


async def test_nul_cases_cover_every_string_argument(tmp_path: Path) -> None:
    """Every string-holding argument of every tool has a NUL case (a new tool or argument
    without one fails here)."""
    runtime, _ = open_runtime(tmp_path, "http://127.0.0.1:9/v1", record=False)
    try:
        registry = runtime.services.tool
        wanted = {
            (spec.name, arg)
            for spec in registry.list()
            for arg in _string_arguments(spec.input_schema)
            if not spec.name.startswith("mcp")
        }
    finally:
        await runtime.aclose()
    covered = {(tool, _top(_nul_where(args))) for _, tool, args in NUL_CASES}
    missing = sorted(wanted - covered)
    assert not missing, f"no NUL case for {missing}"


@pytest.mark.parametrize(
    "tool", sorted({t for _, t, _ in NUL_CASES}), ids=lambda t: f"NUL in every {t} argument"
)
@pytest.mark.attack(SECTION, "a NUL character in each string argument of each tool")
async def test_nul_in_string_arguments(
    tool: str, tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """One reply calls ``tool`` once per string argument with a NUL in it: each call is
    answered with an error naming the argument, before the tool ran (no file written, no
    note kept), the turn completes, and the next message works."""
    cases = [(role, args) for role, name, args in NUL_CASES if name == tool]
    role = cases[0][0]
    calls = [tool_call(tool, args, id=f"call_nul_{i}") for i, (_, args) in enumerate(cases)]
    result, following, messages, repo = await _turns(
        tmp_path, llm_server, text_reply(tool_calls=calls), role=role
    )
    answers = _answers(messages)
    assert result.stop_reason == "completed", result.error
    assert following.stop_reason == "completed", following.error
    for i, (_, args) in enumerate(cases):
        content = answers[f"call_nul_{i}"]
        where = _nul_where(args)
        assert "NUL character" in content, (args, content)
        named = "an argument name" if where == "argument name" else f"argument `{where}`"
        assert named in content, content
        assert "Traceback" not in content
    assert not (repo / "nul.txt").exists()
    assert not [p for p in repo.iterdir() if "\x00" in p.name or p.name in ("a", "b")]
    assert _valid_after(tmp_path / "smith.db", llm_server) == []


@pytest.mark.control(SECTION, "a NUL in a path or command makes the system calls raise")
def test_nul_breaks_system_calls(tmp_path: Path) -> None:
    """Without the check, the tools' system calls fail with an internal ValueError."""
    with pytest.raises(ValueError, match="null"):
        open(tmp_path / NUL, "w")
    with pytest.raises(ValueError, match="null"):
        os.stat(tmp_path / NUL)
    with pytest.raises(ValueError, match="null"):
        subprocess.run(["echo", NUL], check=False)


# ------------------------------------------------------------------ deep nesting


def _run_headless(tmp_path: Path, server: ScriptedLLMServer, *replies: Reply) -> Any:
    """``smith -p`` in process, then ``--continue`` with the next question."""
    repo = make_git_repo(tmp_path / "repo")
    server.enqueue(*replies)
    db = tmp_path / "smith.db"
    config = write_config(tmp_path)
    env = smith_env(tmp_path)
    first = run_inprocess(
        ["-p", "use the tools", *server_args(server.base_url, db, config)], cwd=repo, env=env
    )
    server.enqueue(text_reply("Next answer."))
    second = run_inprocess(
        ["-p", "next question", "--continue", *server_args(server.base_url, db, config)],
        cwd=repo,
        env=env,
    )
    return first, second, db


def _stored_calls(db: Path) -> list[dict[str, Any]]:
    return [m for m in stored_wire(db) if m.get("role") in ("assistant", "tool")]


@pytest.mark.attack(SECTION, "tool-call arguments nested 100,000 levels deep")
def test_deep_arguments(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """``{"path": [[[…]]]}`` 100,000 deep: the call gets an error saying how deep is
    allowed, the transcript keeps ``{}`` (the raw text in metadata), and the headless run
    and the next one finish without a traceback."""
    arguments = '{"path": ' + DEEP + "}"
    first, second, db = _run_headless(
        tmp_path,
        llm_server,
        text_reply(tool_calls=[tool_call("read", arguments, id="call_deep")]),
        text_reply("Flat next time."),
    )
    assert first.code == 0 and second.code == 0, first.stderr + second.stderr
    assert not has_traceback(first.stdout, first.stderr, second.stdout, second.stderr)
    assert "→ read" in first.stderr  # the headless printer showed the call
    assert "Flat next time." in first.stdout and "Next answer." in second.stdout
    wire = _stored_calls(db)
    call = wire[0]["tool_calls"][0]
    assert call["id"] == "call_deep" and call["function"]["arguments"] == "{}"
    answer = next(m for m in wire if m.get("tool_call_id") == "call_deep")
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in answer["content"]
    from smith_tui.store import Store

    with Store.open(db) as store:
        conv = store.conversations.list_all()[0]
        stored = store.conversations.list_messages(conv.id)
    kept = next(m for m in stored if m.role == "assistant" and m.tool_calls)
    assert kept.metadata["raw_arguments"]["call_deep"] == arguments
    assert _valid_after(db, llm_server) == []


@pytest.mark.attack(SECTION, "a string argument holding JSON nested 100,000 deep")
async def test_deep_json_in_a_string_argument(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """``todo`` decodes ``items`` given as a JSON string: 100,000 levels in it are refused
    with an error naming ``items``; the turn completes and the next message works."""
    calls = [tool_call("todo", {"items": DEEP}, id="call_deep_string")]
    result, following, messages, _ = await _turns(
        tmp_path, llm_server, text_reply(tool_calls=calls)
    )
    assert result.stop_reason == "completed", result.error
    assert following.stop_reason == "completed", following.error
    content = _answers(messages)["call_deep_string"]
    assert "items" in content and f"nested deeper than {MAX_JSON_DEPTH} levels" in content
    assert _valid_after(tmp_path / "smith.db", llm_server) == []


@pytest.mark.attack(SECTION, "arguments one level deeper than allowed, and as deep as allowed")
async def test_depth_limit_edge(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """``MAX_JSON_DEPTH`` levels in all pass the depth check (the tool's schema answers),
    one more is refused as too deep."""
    inner = MAX_JSON_DEPTH - 1  # the arguments object is the first level
    ok = '{"key": ' + "[" * inner + "]" * inner + "}"
    over = '{"key": ' + "[" * (inner + 1) + "]" * (inner + 1) + "}"
    calls = [tool_call("recall", ok, id="call_ok"), tool_call("recall", over, id="call_over")]
    result, _, messages, _ = await _turns(tmp_path, llm_server, text_reply(tool_calls=calls))
    assert result.stop_reason == "completed", result.error
    answers = _answers(messages)
    assert "nested deeper" not in answers["call_ok"] and "key" in answers["call_ok"]
    assert f"nested deeper than {MAX_JSON_DEPTH} levels" in answers["call_over"]


@pytest.mark.attack(SECTION, "arguments given as an object nested 100,000 deep")
def test_deep_object_arguments() -> None:
    """Arguments that arrive already decoded (a dict) are walked without recursion."""
    value: list[Any] = []
    root = {"path": value}
    for _ in range(DEPTH):
        value.append([])
        value = value[0]
    with pytest.raises(ToolError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        check_argument_values(root)


@pytest.mark.attack(SECTION, "a stream chunk nested 100,000 levels deep")
def test_deep_stream_chunk(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """A chunk the decoder cannot follow is invalid JSON: the turn ends with that error
    (no traceback), the transcript stays valid and the next message works."""
    chunk = '{"choices": [{"index": 0, "delta": {"content": "hi"}}], "x": ' + DEEP + "}"
    first, second, db = _run_headless(
        tmp_path, llm_server, raw_sse([f"data: {chunk}\n\n"], include_done=True)
    )
    assert first.code == 1 and "not valid JSON" in first.last_line, first.stderr
    assert second.code == 0 and "Next answer." in second.stdout, second.stderr
    assert not has_traceback(first.stdout, first.stderr, second.stdout, second.stderr)
    assert _valid_after(db, llm_server) == []


@pytest.mark.attack(SECTION, "a whole JSON response body nested 100,000 levels deep")
def test_deep_response_body(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """A server that answers the stream request with one JSON body too deep to decode:
    the turn ends saying the body is not valid JSON, and the next message works."""
    body = '{"choices": [{"index": 0, "message": {"content": "hi"}}], "x": ' + DEEP + "}"
    reply = Reply(body=body.encode(), content_type="application/json", label="deep body")
    first, second, db = _run_headless(tmp_path, llm_server, reply)
    assert first.code == 1 and "not valid JSON" in first.last_line, first.stderr
    assert second.code == 0 and "Next answer." in second.stdout, second.stderr
    assert not has_traceback(first.stdout, first.stderr, second.stdout, second.stderr)
    assert _valid_after(db, llm_server) == []


@pytest.mark.control(SECTION, "Python's JSON decoder recurses: 100,000 levels raise")
def test_deep_json_breaks_the_decoder() -> None:
    """Without the depth check, decoding raises RecursionError, which no ``except
    ValueError`` around a JSON decode catches."""
    with pytest.raises(RecursionError):
        json.loads(DEEP)
    with pytest.raises(RecursionError):
        json.loads('{"path": ' + DEEP + "}")
    assert not issubclass(RecursionError, ValueError)


# ------------------------------------------------------------------ huge replies

MB = 1024 * 1024
LINE = "The quick brown fox jumps over the lazy dog, again and again. 0123456789\n"
PIECE = (LINE * (MB // len(LINE) + 1))[:MB]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-huge",
        "object": "chat.completion.chunk",
        "model": "scripted-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


def _huge_text_reply(megabytes: int) -> Reply:
    """A streamed answer of ``megabytes`` MiB of text, one MiB per delta (the same bytes
    object repeated, so the server holds one MiB, not all of it)."""
    frame = _chunk({"content": PIECE})
    events = [_chunk({"role": "assistant", "content": ""}), *[frame] * megabytes]
    return Reply(events=[*events, _chunk({}, "stop"), DONE.encode()], label="huge")


PEAK_KB = (
    "def peak_kb():\n"
    "    with open('/proc/self/status') as status:\n"
    "        return int(next(l for l in status if l.startswith('VmHWM:')).split()[1])\n"
)
"""``peak_kb()``: the peak RSS of the calling process's own address space, in KiB.

Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries into it the peak of the address
space a process had before ``exec``, and a child started with vfork or posix_spawn (as
``subprocess`` does) had its parent's there - late in a full suite the pytest process's
several hundred MB, whatever the child itself used. ``VmHWM`` starts afresh at ``exec``."""

PEAK_WRAPPER = PEAK_KB + (
    "import sys\n"
    "from smith_tui.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stderr.write('PEAK_KB %d\\n' % peak_kb())\n"
    "sys.exit(code)\n"
)
"""The real ``smith`` command line in a fresh interpreter that reports its own peak RSS
(its own: not the largest child this test session ever waited for, nor the test
process's, see :data:`PEAK_KB`)."""


def _smith_peak(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[Any, int]:
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_WRAPPER, *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    peak = [line for line in proc.stderr.splitlines() if line.startswith("PEAK_KB ")]
    assert peak, proc.stderr[-2000:]
    return proc, int(peak[-1].split()[1]) * 1024


@pytest.mark.attack(SECTION, "a 200 MB model reply streamed fast")
def test_200_mb_reply(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """The real ``smith -p`` keeps the first ``MAX_MESSAGE_CHARS`` characters (shown and
    stored), ends them with a marker saying how much was dropped and why, stays under
    150 MB of memory, and the next message works."""
    repo = make_git_repo(tmp_path / "repo")
    db = tmp_path / "smith.db"
    config = write_config(tmp_path)
    env = smith_env(tmp_path)
    llm_server.enqueue(_huge_text_reply(200))
    started = time.monotonic()
    proc, peak = _smith_peak(
        ["-p", "say a lot", *server_args(llm_server.base_url, db, config)], repo, env
    )
    seconds = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert peak < 150 * MB, f"peak RSS {peak // MB} MB"
    dropped = 200 * MB - MAX_MESSAGE_CHARS
    marker = f"went on for {dropped:,} more characters; they were dropped"
    assert proc.stdout.startswith(PIECE[:1000]) and marker in proc.stdout
    assert len(proc.stdout) < MAX_MESSAGE_CHARS + 1000
    reply = [m for m in stored_wire(db) if m["role"] == "assistant"][-1]
    assert reply["content"].startswith(PIECE[:1000]) and marker in reply["content"]
    assert MAX_MESSAGE_CHARS < len(reply["content"]) < MAX_MESSAGE_CHARS + 1000
    # the 2 MB answer fills the context window: the next turn compacts first (one request)
    llm_server.enqueue(text_reply("Summary: a long answer."), text_reply("Shorter now."))
    second = run_inprocess(
        ["-p", "next question", "--continue", *server_args(llm_server.base_url, db, config)],
        cwd=repo,
        env=env,
    )
    assert second.code == 0 and "Shorter now." in second.stdout, second.stderr
    assert _valid_after(db, llm_server) == []
    assert seconds < 60


CONTROL_CHILD = PEAK_KB + (
    "import json\n"
    "from smith_tui.llm.stream import StreamAssembler\n"
    "piece = 'x' * (1024 * 1024)\n"
    "frame = json.dumps({'choices': [{'index': 0, 'delta': {'content': piece}}]})\n"
    "asm = StreamAssembler(max_chars=10**12)\n"
    "for _ in range(200):\n"
    "    asm.feed_event(None, frame)\n"
    "    asm.out.clear()\n"
    "print(len(asm.finish().content), peak_kb())\n"
)


@pytest.mark.control(SECTION, "assembling a 200 MB reply without the cap holds all of it")
def test_uncapped_assembly_grows() -> None:
    """The same assembly with the cap lifted keeps every chunk: 200 MB of text, and the
    process's peak memory passes 400 MB."""
    proc = subprocess.run(
        [sys.executable, "-c", CONTROL_CHILD],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    length, peak_kb = (int(x) for x in proc.stdout.split())
    assert length == 200 * MB
    assert peak_kb * 1024 > 400 * MB


@pytest.mark.attack(SECTION, "huge reasoning and a tool call with 3 MB of arguments")
async def test_huge_reasoning_and_arguments(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """Reasoning is cut like text; arguments past the cap reach the tool cut, and the call
    is answered with an error saying why (nothing written); the next message works."""
    content = "y" * (3 * MB)
    call = tool_call("write", {"path": "big.txt", "content": content}, id="call_big")
    reply = text_reply(
        reasoning="r" * (MAX_MESSAGE_CHARS + 5000), tool_calls=[call], chunk_chars=MB
    )
    result, following, messages, repo = await _turns(tmp_path, llm_server, reply)
    assert result.stop_reason == "completed", result.error
    assert following.stop_reason == "completed", following.error
    answer = _answers(messages)["call_big"]
    assert f"cut at {MAX_MESSAGE_CHARS:,} characters" in answer, answer[:300]
    assert not (repo / "big.txt").exists()
    thought = next(m for m in messages if m.get("role") == "assistant" and m.get("reasoning"))
    assert "went on for 5,000 more characters; they were dropped" in thought["reasoning"]
    assert _valid_after(tmp_path / "smith.db", llm_server) == []


# ------------------------------------------------------------------ many calls


def _many_calls(count: int) -> Reply:
    calls = [tool_call("recall", {"key": f"k{i}"}, id=f"call_{i}") for i in range(count)]
    return text_reply(tool_calls=calls, chunk_chars=0)


async def _timed_many(tmp_path: Path, server: ScriptedLLMServer, count: int) -> float:
    started = time.monotonic()
    result, following, messages, _ = await _turns(
        tmp_path, server, _many_calls(count), config={"tool_step_budget": 20}
    )
    seconds = time.monotonic() - started
    assert result.stop_reason == "budget_exhausted", result.error
    assert "tool step budget (20)" in str(result.error and result.error.message)
    assert following.stop_reason == "completed", following.error
    answers = _answers(messages)
    assert len(answers) == count
    ran = [c for c in answers.values() if "did not run" not in c]
    assert len(ran) == 20
    assert _valid_after(tmp_path / "smith.db", server) == []
    return seconds


@pytest.mark.attack(SECTION, "10,000 tool calls in one reply")
async def test_ten_thousand_calls(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    """The step budget holds (20 calls run, every other one is answered "did not run"), the
    transcript stays valid, and the cost grows about linearly: ten times the calls take
    well under the 100 times a quadratic step would."""
    small = await _timed_many(tmp_path / "small", llm_server, 1_000)
    llm_server.clear()
    large = await _timed_many(tmp_path / "large", llm_server, 10_000)
    assert large < 30, f"{large:.1f} s for 10,000 calls"
    assert large < 25 * max(small, 0.2), f"1,000 calls {small:.2f} s, 10,000 {large:.2f} s"


@pytest.mark.control(SECTION, "the reply really carries 10,000 calls")
def test_ten_thousand_calls_assemble() -> None:
    """Assembled on its own, the scripted reply gives back all 10,000 calls: only the step
    budget stands between them and the tools."""
    asm = StreamAssembler()
    for payload in _many_calls(10_000).payloads():
        asm.feed_event(None, payload)
        asm.out.clear()
    assert len(asm.finish().tool_calls) == 10_000


@pytest.mark.attack(SECTION, "reasoning_details text in 100,000 pieces past the cap")
def test_reasoning_details_in_many_pieces() -> None:
    """Detail text is joined once at the end (adding each piece to the text so far is
    quadratic) and kept up to the cap; the plain reasoning gets the dropped-marker."""
    piece = "z" * 30
    asm = StreamAssembler(max_chars=1_000_000)
    started = time.process_time()  # CPU time: a loaded machine's wall clock counts others
    for _ in range(100_000):
        detail = {"type": "reasoning.text", "index": 0, "text": piece}
        asm.feed({"choices": [{"index": 0, "delta": {"reasoning_details": [detail]}}]})
        asm.out.clear()
    response = asm.finish()
    seconds = time.process_time() - started
    assert len(response.reasoning_details) == 1
    assert len(response.reasoning_details[0]["text"]) == 1_000_000
    assert response.reasoning.startswith("z" * 1000)
    assert "went on for 2,000,000 more characters; they were dropped" in response.reasoning
    assert seconds < 10, f"{seconds:.1f} s"
