"""Slash commands, conversations, auto-resume and load-time repair through a real runtime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.model_select import ModelSelection
from smith_tui.engine.runtime import Runtime, RuntimeOptions
from smith_tui.store import TOOL_OUTCOME_UNKNOWN
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import open_runtime


async def test_unknown_command_suggests_closest(tmp_path: Path, llm_server) -> None:
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    out = await runtime.submit("/modle")
    assert not out.ok and "did you mean" in out.text and "/model," in out.text
    out = await runtime.submit("/zzzzzz")
    assert not out.ok and "/help" in out.text
    assert rec.of(ev.CommandOutput)[-1] is out
    assert llm_server.chat_requests() == []
    await runtime.aclose()


async def test_help_lists_every_command_and_key(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    out = await runtime.submit("/help")
    for name in ("/new", "/load", "/config", "/model", "/models", "/role", "/usage", "/export"):
        assert name in out.text
    for key in ("ctrl+c", "alt+h", "alt+i", "ctrl+p", "f4", "ctrl+q"):
        assert key in out.text
    await runtime.aclose()


async def test_config_set_get_unset_persists_and_validates(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    out = await runtime.submit("/config set context_management.trim_threshold_pct 60")
    assert out.ok, out.text
    assert runtime.config.effective["context_management"]["trim_threshold_pct"] == 60
    out = await runtime.submit("/config get context_management.trim_threshold_pct")
    assert "60" in out.text and "persisted" in out.text
    out = await runtime.submit("/config set context_management.trim_threshold_pct 150")
    assert not out.ok
    assert runtime.store.config.get("runtime_overrides") == {
        "context_management": {"trim_threshold_pct": 60}
    }
    out = await runtime.submit("/config set defualt_model x")
    assert not out.ok and "default_model" in out.text
    out = await runtime.submit("/config set models.worker openrouter/qwen/qwen3.6-27b")
    assert out.ok and runtime.config.effective["models"]["worker"] == "openrouter/qwen/qwen3.6-27b"
    await runtime.aclose()

    # A fresh runtime on the same database sees the persisted patch.
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    assert runtime.config.effective["context_management"]["trim_threshold_pct"] == 60
    out = await runtime.submit("/config unset context_management.trim_threshold_pct")
    assert out.ok
    assert "context_management" not in (runtime.store.config.get("runtime_overrides") or {})
    out = await runtime.submit("/config")
    assert out.ok and out.data == {"action": "config"}
    out = await runtime.submit("/config show")
    assert json.loads(out.text)["llm_config"]["api_url"] == llm_server.base_url
    await runtime.aclose()


async def test_model_pin_wins_over_default(tmp_path: Path, llm_server: ScriptedLLMServer) -> None:
    llm_server.enqueue(text_reply("a"), text_reply("b"))
    runtime, _ = open_runtime(
        tmp_path, llm_server.base_url, model=None, env={"SMITH_MODEL": "env-m"}
    )
    await runtime.run_turn("one")
    assert llm_server.chat_requests()[0]["model"] == "env-m"
    out = await runtime.submit("/model pinned-m")
    assert out.ok
    await runtime.run_turn("two")
    assert llm_server.chat_requests()[1]["model"] == "pinned-m"
    out = await runtime.submit("/model")
    assert "pinned-m" in out.text and "pinned" in out.text
    await runtime.aclose()


async def test_models_and_discovery_from_catalog(tmp_path: Path, llm_server) -> None:
    llm_server.catalog = {
        "object": "list",
        "data": [{"id": "alpha-1", "object": "model"}, {"id": "beta-2", "object": "model"}],
    }
    llm_server.enqueue(text_reply("from catalog"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url, model=None)
    out = await runtime.submit("/models")
    assert "alpha-1" in out.text and "beta-2" in out.text
    await runtime.run_turn("hi")
    assert llm_server.chat_requests()[0]["model"] == "alpha-1"
    assert runtime.last_selection.source == "discovery:first_available"
    await runtime.aclose()


async def test_role_switch_and_refusal(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    out = await runtime.submit("/role orchestrator")
    assert out.ok and runtime.active_role == "orchestrator"
    out = await runtime.submit("/role worker")
    assert not out.ok and "dispatched" in out.text
    llm_server.enqueue(text_reply("tank here"))
    await runtime.submit("hello")
    tools = {t["function"]["name"] for t in llm_server.chat_requests()[0]["tools"]}
    assert "git" not in tools or "bash" not in tools
    assert "bash" not in tools and "dispatch" in tools
    await runtime.aclose()


async def test_new_load_history_export_usage(tmp_path: Path, llm_server) -> None:
    llm_server.enqueue(text_reply("answer one", usage={"prompt_tokens": 9, "completion_tokens": 4}))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    await runtime.submit("question one")
    first = runtime.conversations.conversation_id
    out = await runtime.submit("/new")
    assert (
        out.ok
        and runtime.conversations.conversation_id != first
        and runtime.conversations.messages == []
    )
    out = await runtime.submit("/history")
    assert first in out.text
    out = await runtime.submit(f"/load {first}")
    assert out.ok and [m["content"] for m in runtime.conversations.messages] == [
        "question one",
        "answer one",
    ]
    out = await runtime.submit("/usage")
    assert "direct" in out.text and "9" in out.text
    target = tmp_path / "out.md"
    out = await runtime.submit(f"/export {target}")
    assert out.ok and "answer one" in target.read_text()
    out = await runtime.submit("/load")
    assert not out.ok and "usage" in out.text
    await runtime.aclose()


async def test_auto_resume_once_and_not_after_new(tmp_path: Path, llm_server) -> None:
    llm_server.enqueue(text_reply("remember me"))
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    await runtime.submit("first session")
    conv = runtime.conversations.conversation_id
    await runtime.aclose()

    runtime, rec = open_runtime(tmp_path, llm_server.base_url, auto_resume=True)
    assert runtime.conversations.ensure() == conv
    assert rec.of(ev.ConversationChanged)[-1].reason == "resume"
    assert [m["content"] for m in runtime.conversations.messages] == [
        "first session",
        "remember me",
    ]
    runtime.conversations.new()
    assert runtime.conversations.ensure() != conv
    await runtime.aclose()

    runtime, _ = open_runtime(tmp_path, llm_server.base_url, auto_resume=False)
    assert runtime.conversations.ensure() != conv
    await runtime.aclose()


async def test_load_repairs_orphan_tool_calls_once(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    runtime.conversations.new()
    conv = runtime.conversations.ensure()  # stored, as a turn would
    runtime.store.conversations.append_messages(
        conv,
        [
            {"role": "user", "content": "do it"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": "{}"},
                    }
                ],
            },
        ],
    )
    runtime.conversations.load(conv)
    runtime.conversations.load(conv)
    tools = [m for m in runtime.conversations.messages if m["role"] == "tool"]
    assert len(tools) == 1 and tools[0]["content"].startswith(TOOL_OUTCOME_UNKNOWN)
    llm_server.enqueue(text_reply("ok"))
    result = await runtime.run_turn("continue")
    assert result.stop_reason == "completed"
    await runtime.aclose()


async def test_session_lifecycle(tmp_path: Path, llm_server) -> None:
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    assert runtime.session.status == "created"
    runtime.start_session()
    assert runtime.session.status == "running" and rec.of(ev.SessionStarted)
    runtime.fail_session(ValueError("boom"))
    assert runtime.session.status == "failed" and runtime.session.error.message == "boom"
    await runtime.aclose()


class _FixedModel:
    """A model service handed in: every turn runs on one model."""

    def __init__(self) -> None:
        self.roles: list[str] = []

    async def catalog(self) -> list:
        return []

    async def select(self, request_model, pinned, role_spec, config) -> ModelSelection:
        self.roles.append(role_spec.name)
        return ModelSelection("injected-model", "test", None, 4096, None)


async def test_compose_services_uses_a_handed_in_handle(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("hi"))
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"llm_config": {"api_url": llm_server.base_url}}))
    model = _FixedModel()
    runtime = Runtime.open(
        RuntimeOptions(cwd=tmp_path, config_path=str(cfg), db_path=str(tmp_path / "x.db")),
        handles={"model": model},
        env={},
    )
    assert runtime.services.model is model
    result = await runtime.run_turn("hello")
    assert result.stop_reason == "completed"
    assert model.roles == ["direct"]
    assert llm_server.chat_requests()[0]["model"] == "injected-model"
    await runtime.aclose()


def test_compose_services_refuses_an_unknown_handle(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown service handle\(s\): ui"):
        Runtime.open(
            RuntimeOptions(cwd=tmp_path, db_path=str(tmp_path / "x.db")),
            handles={"ui": object()},
            env={},
        )


async def test_doctor_command_probes_the_server_and_sends_no_conversation(
    tmp_path: Path, llm_server
) -> None:
    from smith_tui.llm.server_check import PROBE_TOOL
    from tests.support.llm_server import tool_call

    llm_server.enqueue(
        text_reply(tool_calls=[tool_call(PROBE_TOOL, {"word": "ping"})]),
        text_reply("1 2", finish_reason="length"),
    )
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    out = await runtime.submit("/doctor")
    assert out.ok, out.text
    assert "✓ tool calls" in out.text and "! usage" in out.text
    assert out.data["ok"] is True
    probes = llm_server.chat_requests()
    assert len(probes) == 2 and all(len(body["messages"]) == 1 for body in probes)
    assert runtime.conversations.messages == []  # the probes are not part of the conversation
    out = await runtime.submit("/doctor a b")
    assert not out.ok and "usage: /doctor" in out.text
    await runtime.aclose()
