"""`smith acp` driven by a client on the ACP TypeScript SDK from npm (tests/acp/ts/client.mjs,
installed by `.ci/run` with `npm ci --prefix tests/acp/ts`) against the scripted
Chat-Completions server, asserted on the messages `smith acp` wrote to that client.

Issue 25's "Missing" items: the capabilities, the config options with their categories,
model switching, session_info_update, usage_update, session/list, fork, close and resume,
image prompts. Its "Broken" items 1-10, with tests/acp/test_acp_editor.py's scenarios (the
same repository and server scripts, so both SDKs' clients see the same thing): the TS client
is an editor there (it offers files and terminals and allows what it is asked), one node
process per scenario group, which starts a second `smith acp` to load the sessions."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acp.test_acp_editor import _files, dispatch_script, editor_repo, permission_script
from tests.acp.test_acp_sessions import CATALOG, _user_texts
from tests.engine.test_headless_cli import _config
from tests.support.llm_server import ScriptedLLMServer, http_error, text_reply
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import SMITH, smith_env

TS = Path(__file__).resolve().parent / "ts"
SDK = TS / "node_modules" / "@agentclientprotocol" / "sdk"


def _run_client(scenario: str, repo: Path, argv: list[str], env: dict[str, str]) -> Any:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the ACP TypeScript SDK runs on it)")
    assert SDK.is_dir(), "the ACP TypeScript SDK is missing: run npm ci --prefix tests/acp/ts"
    done = subprocess.run(
        [node, str(TS / "client.mjs"), scenario, str(repo), "--", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["failure"] is None, report["failure"]
    for label, agent in report["agents"].items():
        assert agent["exit"] == 0, (label, done.stderr[-3000:])
    return report


def _updates(wire: list[dict[str, Any]], session_id: str, kind: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in wire
        if m.get("method") == "session/update"
        and m["params"]["sessionId"] == session_id
        and m["params"]["update"]["sessionUpdate"] == kind
    ]


def test_ts_sdk_client_lists_forks_closes_resumes_and_switches_models(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    usage = {"prompt_tokens": 900, "completion_tokens": 20, "cost": 0.003}
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(
            text_reply("one", usage=usage),
            text_reply("two", usage=usage),
            text_reply("forked"),
            text_reply("resumed"),
        )
        argv = [SMITH, "acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
        argv += ["--config", _config(tmp_path)]
        report = _run_client("sessions", repo, argv, smith_env(tmp_path))
        requests = server.chat_requests()
    steps = {s["name"]: s for s in report["steps"]}
    wire = report["agents"]["agent"]["wire"]

    caps = steps["initialize"]["result"]["agentCapabilities"]
    assert caps["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "fork": {}}
    assert caps["promptCapabilities"]["image"] is True  # for a model that takes images
    new = steps["new"]["result"]
    sid = new["sessionId"]
    options = {o["id"]: o for o in new["configOptions"]}
    assert list(options) == ["role", "model", "mode"]
    assert options["model"]["category"] == "model"
    assert [c["value"] for c in options["model"]["options"]] == [
        "auto",
        "vision-model",
        "text-model",
    ]
    assert options["mode"]["category"] == "mode"
    assert options["role"]["category"] == "_smith_role"

    # The first prompt names the session; usage follows each request.
    # (again when it is resumed: the editor lists it by that title)
    titles = [u["title"] for u in _updates(wire, sid, "session_info_update")]
    assert titles == ["first question", "first question"]
    switched = {o["id"]: o["currentValue"] for o in steps["set-model"]["result"]["configOptions"]}
    assert switched["model"] == "text-model"
    assert requests[1]["model"] == "text-model"
    usages = _updates(wire, sid, "usage_update")
    # After the second request (on text-model, 16k window): both requests' cost so far.
    second = usages[1]
    assert second["size"] == 16000 and second["used"] > 0
    assert second["cost"] == {"amount": 0.006, "currency": "USD"}
    assert usages[0]["cost"] == {"amount": 0.003, "currency": "USD"}

    listed = steps["list"]["result"]["sessions"]
    assert listed[0]["sessionId"] == sid and listed[0]["title"] == "first question"
    assert listed[0]["cwd"] == str(repo) and listed[0]["updatedAt"].endswith("Z")

    fork_id = steps["fork"]["result"]["sessionId"]
    assert fork_id != sid
    assert _user_texts(requests[2]) == ["first question", "another second"]
    assert steps["prompt-fork"]["result"]["stopReason"] == "end_turn"

    assert steps["close"]["result"] == {}
    closed = steps["prompt-closed"]["error"]
    assert f"no open session '{sid}'" in json.dumps(closed)

    assert "configOptions" in steps["resume"]["result"]
    resumed_at = next(  # the resume's answer: modes, and no session id of its own
        i
        for i, m in enumerate(wire)
        if "modes" in (m.get("result") or {}) and "sessionId" not in m["result"]
    )
    replayed = [
        m
        for m in wire[resumed_at:]
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert replayed == []  # resume does not replay what the client shows already
    assert _user_texts(requests[3]) == ["first question", "second question", "third question"]
    assert steps["prompt-resumed"]["result"]["stopReason"] == "end_turn"


def test_ts_sdk_client_image_prompt_and_its_refusal(tmp_path: Path) -> None:
    from tests.acp.test_acp_images import PNG

    repo = make_git_repo(tmp_path / "repo")
    with ScriptedLLMServer(catalog=CATALOG) as server:
        server.enqueue(text_reply("a green pixel"))
        argv = [SMITH, "acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
        argv += ["--config", _config(tmp_path)]
        env = {**smith_env(tmp_path), "TEST_IMAGE_PNG": PNG}
        report = _run_client("images", repo, argv, env)
        requests = server.chat_requests()
    steps = {s["name"]: s for s in report["steps"]}
    caps = steps["initialize"]["result"]["agentCapabilities"]
    assert caps["promptCapabilities"]["image"] is True
    assert steps["prompt-image"]["result"]["stopReason"] == "end_turn"
    (request,) = requests  # the refused prompt sent nothing
    assert request["model"] == "vision-model"
    prompts = [m for m in request["messages"] if m["role"] == "user"]
    assert prompts[0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    refused = steps["prompt-refused"]["error"]
    assert refused["code"] == -32602
    assert "the model text-model does not take images" in json.dumps(refused["data"])


# --- Issue 25's "Broken" items, the TS client as an editor ---------------------------------


def _run_editor(
    tmp_path: Path, server: ScriptedLLMServer, scenario: str
) -> tuple[dict[str, Any], Any]:
    """``scenario`` of client.mjs's editor scenarios against ``smith acp`` in the editor
    repository: the steps by name, and the report."""
    repo = tmp_path / "repo"
    argv = [SMITH, "acp", "--api-url", server.base_url, "--db", str(tmp_path / "smith.db")]
    argv += ["--config", _config(tmp_path)]
    report = _run_client(scenario, repo, argv, smith_env(tmp_path))
    return {s["name"]: s for s in report["steps"]}, report


def _span(report: Any, agent: str, step: dict[str, Any]) -> list[dict[str, Any]]:
    """What ``agent`` wrote while ``step`` ran (its answer last)."""
    return report["agents"][agent]["wire"][step["from"] : step["to"]]


def _chunks(messages: list[dict[str, Any]], session_id: str, kind: str) -> str:
    return "".join(u["content"].get("text", "") for u in _updates(messages, session_id, kind))


def _card_text(update: dict[str, Any]) -> str:
    """A tool call's text content blocks, joined."""
    return "".join(
        c["content"].get("text", "") for c in update.get("content") or [] if c["type"] == "content"
    )


def _call_updates(messages: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in messages
        if m.get("method") == "session/update"
        and m["params"]["update"].get("toolCallId") == call_id
    ]


def _agent_requests(messages: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [m["params"] for m in messages if m.get("method") == method and "id" in m]


def _role(update: dict[str, Any]) -> Any:
    return next(o["currentValue"] for o in update["configOptions"] if o["id"] == "role")


def test_ts_sdk_editor_commands_keep_one_conversation_and_a_failed_llm_fails_the_prompt(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """Items 1, 6, 7, 10 (and 9 for commands and a failed turn's mode): the advertised
    commands, the refused ones, /help, /role and /config set active_role as session-only
    switches, a reload keeping every turn; a failed LLM request failing session/prompt."""
    editor_repo(tmp_path / "repo")
    llm_server.enqueue(
        text_reply("First answer."),
        text_reply("Second answer."),
        http_error(400, {"error": {"message": "model melted", "type": "x"}}),
    )
    user_config, config_file = tmp_path / "xdg-config", Path(_config(tmp_path))
    before = _files(user_config, config_file)
    steps, report = _run_editor(tmp_path, llm_server, "commands")
    requests = llm_server.chat_requests()
    live = report["agents"]["live"]["wire"]
    sid = steps["new"]["result"]["sessionId"]

    # Item 7: the commands an editor can offer, with their input hints; /help lists those.
    advertised = steps["advertised"]["result"]["params"]["update"]["availableCommands"]
    commands = {c["name"]: c for c in advertised}
    assert {"help", "role", "mode", "model", "compact", "undo", "review"} <= set(commands)
    assert not {"new", "clear", "load", "quit", "pager", "inspect", "copy"} & set(commands)
    assert commands["role"]["input"] == {"hint": "[direct|orchestrator]"}
    assert commands["mode"]["input"] is not None
    assert commands["review"]["input"] == {"hint": "FILE"}
    assert "Review a file for bugs" in commands["review"]["description"]
    assert commands["undo"].get("input") is None
    help_text = _chunks(_span(report, "live", steps["/help"]), sid, "agent_message_chunk")
    assert "/role [direct|orchestrator]" in help_text and "/review FILE" in help_text
    assert "/quit" not in help_text and "/pager" not in help_text and "Keys" not in help_text
    assert "ctrl+" not in help_text

    # Item 1 (and 7's refusals): each command ends its turn with a hint, in the one session.
    for typed, says in [
        ("/new", "one session is one Smith conversation"),
        ("/clear", "Start a new session in the editor"),
        ("/load abc", "session history"),
        ("/quit", "needs Smith's terminal screen"),
        ("/pager", "needs Smith's terminal screen"),
        ("/memory open 1", "open the file in the editor"),
    ]:
        assert steps[typed]["result"]["stopReason"] == "end_turn", typed
        assert says in _chunks(_span(report, "live", steps[typed]), sid, "agent_message_chunk")

    # Item 6: /role updates the editor's selector; /config set active_role is this session's.
    role_span = _span(report, "live", steps["/role orchestrator"])
    (switched,) = _updates(role_span, sid, "config_option_update")
    assert _role(switched) == "orchestrator"
    before_role = live[: steps["/role orchestrator"]["to"]]
    assert len(_updates(before_role, sid, "config_option_update")) == 1
    set_span = _span(report, "live", steps["/config set active_role direct"])
    assert "this session only" in _chunks(set_span, sid, "agent_message_chunk")
    assert _role(_updates(set_span, sid, "config_option_update")[-1]) == "direct"
    unset_span = _span(report, "live", steps["/config unset active_role"])
    assert "chosen per session" in _chunks(unset_span, sid, "agent_message_chunk")
    assert _files(user_config, config_file) == before  # nothing saved for later sessions
    assert steps["second question"]["result"]["stopReason"] == "end_turn"
    # Both turns went to the editor's one session: the model saw the first in the second.
    assert len(requests) == 3
    contents = [m.get("content") for m in requests[1]["messages"]]
    assert "first question" in contents and "First answer." in contents

    # Item 1 and 9: the reload in a new process shows every turn, the commands' too, in order.
    loaded = _span(report, "reload", steps["load"])
    users = [u["content"]["text"] for u in _updates(loaded, sid, "user_message_chunk")]
    assert users[0] == "first question" and users[-1] == "second question"
    assert "/new" in users and "/role" in users
    answers = _chunks(loaded, sid, "agent_message_chunk")
    assert answers.index("First answer.") < answers.index("one session is one Smith")
    assert answers.index("active role: orchestrator") < answers.index("Second answer.")

    # Item 10: the LLM's error fails session/prompt with its message (said as text first).
    failing = steps["new-failing"]["result"]["sessionId"]
    error = steps["hello"]["error"]
    assert error["code"] == -32603
    assert "model melted" in error["message"] and "model melted" in error["data"]["details"]
    hello = _span(report, "live", steps["hello"])
    assert "model melted" in json.dumps(hello[-1]["error"])  # the raw answer: an error
    said = _chunks(hello, failing, "agent_message_chunk")
    assert "smith: turn ended:" in said and "model melted" in said
    reloaded = steps["load-failing"]
    assert reloaded["result"]["modes"]["currentModeId"] == "yolo"
    replay = _span(report, "reload", reloaded)
    assert "model melted" in _chunks(replay, failing, "agent_message_chunk")


def test_ts_sdk_editor_permission_questions_show_diffs_commands_and_the_terminal_title(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """Items 3, 4, 5: a new file's diff with ``oldText: null``, an edit's whole old and new
    text, bash's command in a fence; the TS client's terminal runs the user's command line
    (the sandbox's in its environment) and the call is titled with it."""
    repo = editor_repo(tmp_path / "repo")
    (write, edit, bash), replies = permission_script()
    llm_server.enqueue(*replies)
    steps, report = _run_editor(tmp_path, llm_server, "permissions")
    wire = report["agents"]["live"]["wire"]
    assert steps["change things"]["result"]["stopReason"] == "end_turn"

    asked = {
        p["toolCall"]["toolCallId"]: p["toolCall"]
        for p in _agent_requests(wire, "session/request_permission")
    }
    assert set(asked) == {write.id, edit.id, bash.id}
    (new_diff, *_) = asked[write.id]["content"]
    assert new_diff["type"] == "diff" and new_diff["path"] == str(repo / "new.txt")
    assert "oldText" in new_diff and new_diff["oldText"] is None  # the key, as null
    assert new_diff["newText"] == "fresh\n"
    (edit_diff, *_) = asked[edit.id]["content"]
    assert edit_diff["type"] == "diff"
    assert (edit_diff["oldText"], edit_diff["newText"]) == ("one\ntwo\n", "one\nTWO\n")
    command = asked[bash.id]["content"][0]["content"]["text"]
    assert command.startswith("````sh\necho ```hi```\n````")  # a fence longer than the text's
    finals = [u for u in _call_updates(wire, write.id) if u.get("status") == "completed"]
    assert finals and "oldText" in finals[-1]["content"][0]
    assert finals[-1]["content"][0]["oldText"] is None
    # Allowed, the writes went through the TS client's fs/write_text_file.
    written = {p["path"]: p["content"] for p in _agent_requests(wire, "fs/write_text_file")}
    assert written == {str(repo / "new.txt"): "fresh\n", str(repo / "notes.txt"): "one\nTWO\n"}
    assert (repo / "notes.txt").read_text() == "one\nTWO\n"

    # Item 5: the TS client advertises terminals, so bash ran in one of its terminals.
    (created,) = _agent_requests(wire, "terminal/create")
    assert (created["command"], created["args"]) == ("smith-sandbox", ["-c", "echo ```hi```"])
    env = {v["name"]: v["value"] for v in created["env"]}
    assert json.loads(env["SMITH_SANDBOX_ARGV"])[0].endswith("bwrap")
    updates = _call_updates(wire, bash.id)
    embedded = next(
        i
        for i, u in enumerate(updates)
        if any(c["type"] == "terminal" for c in u.get("content") or [])
    )
    assert updates[embedded + 1]["title"] == "echo ```hi```"
    assert updates[-1]["status"] == "completed"
    # The sandboxed bash really ran there: the model got the TS terminal's output.
    terminal_calls = [m["method"] for m in wire if str(m.get("method")).startswith("terminal/")]
    assert terminal_calls[0] == "terminal/create" and terminal_calls[-1] == "terminal/release"
    (bash_result,) = [
        m for m in llm_server.chat_requests()[1]["messages"] if m.get("tool_call_id") == bash.id
    ]
    assert "hi: command not found" in bash_result["content"]  # bash ran the backticks


def test_ts_sdk_editor_dispatch_plan_cancel_and_mode_show_live_and_on_reload(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    """Items 2, 3 (dispatch), 8, 9: the dispatch's readable question, its card's final text
    (log and report, no JSON), no empty plan opening the next turn, and a reload with the
    child calls, the same card, the plan, the cancelled mark, the changes and the mode."""
    editor_repo(tmp_path / "repo")
    call, replies = dispatch_script()
    llm_server.enqueue(*replies)
    steps, report = _run_editor(tmp_path, llm_server, "dispatch")
    live = report["agents"]["live"]["wire"]
    sid = steps["new"]["result"]["sessionId"]
    assert steps["where is the parser?"]["result"]["stopReason"] == "end_turn"
    assert steps["again"]["result"]["stopReason"] == "cancelled"
    assert steps["write it"]["result"]["stopReason"] == "end_turn"

    (asked,) = [
        p["toolCall"]
        for p in _agent_requests(live, "session/request_permission")
        if p["toolCall"]["toolCallId"] == call.id
    ]
    question = _card_text(asked)
    assert "Dispatch **explorer** to: map the parser" in question and "{'" not in question
    final = _call_updates(live, call.id)[-1]
    assert final["status"] == "completed"
    card = _card_text(final)
    for line in (
        "explorer started: map the parser",
        "→ read notes.txt",
        "explorer ok: The parser lives in src/parse.py.",
        "Findings:\n- parse() is in src/parse.py",
        "Evidence:\n- src/parse.py:12",
    ):
        assert line in card
    assert '"findings"' not in card and "{" not in card

    # Item 8: every plan the client got has entries; the turn after the plan opened none.
    plans = _updates(live, sid, "plan")
    assert plans and all(p["entries"] for p in plans)
    assert _updates(_span(report, "live", steps["thanks"]), sid, "plan") == []

    loaded_step = steps["load"]
    assert loaded_step["result"]["modes"]["currentModeId"] == "auto-edit"
    loaded = _span(report, "reload", loaded_step)
    reloaded = _call_updates(loaded, call.id)[-1]
    assert reloaded["status"] == "completed" and _card_text(reloaded) == card
    children = [
        u for u in _updates(loaded, sid, "tool_call") if (u.get("_meta") or {}).get("smith")
    ]
    assert [c["title"] for c in children] == ["explorer: read notes.txt", "explorer: report ok"]
    assert all(c["_meta"]["smith"]["parent"] == call.id for c in children)
    (plan,) = _updates(loaded, sid, "plan")
    assert [(e["content"], e["status"]) for e in plan["entries"]] == [("ship it", "in_progress")]
    said = _chunks(loaded, sid, "agent_message_chunk")
    assert said.index("Mapped.") < said.index("[cancelled]") < said.index("Wrote it.")
    changed = "this turn changed 1 file: A out.txt"
    assert changed in _chunks(live, sid, "agent_thought_chunk")
    assert changed in _chunks(loaded, sid, "agent_thought_chunk")
