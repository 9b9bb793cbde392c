"""Who handles a message: the complex-request heuristic over a fixed list (English and
Chinese), the hint and routing.auto through a real runtime, and @name parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.routing import handoff, looks_complex
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import open_runtime

COMPLEX = [
    "Refactor the authentication module to use the new token service, then update the API "
    "endpoints that call it, add tests for the expired-token case, and finally update the docs "
    "and the CLI help so they describe the new login flow.",
    "1. Add a `tags` column to the database schema with a migration\n"
    "2. Expose it in the REST API and the client\n"
    "3. Show the tags in the UI list view\n"
    "4. Write tests for the migration and the endpoints",
    "First migrate the config loader to the new format, then fix the three failing tests in the "
    "server package, and also update the documentation of the routes and the CI pipeline to run "
    "the new integration tests.",
    "首先重构后端的认证模块，改用新的令牌服务，然后修改所有调用它的接口，接着为令牌过期的情况编写测试，"
    "最后更新文档和前端的登录界面，让它们符合新的登录流程。",
    "请帮我实现一个新的导出功能：第一步在数据库里添加导出记录表，第二步在后端添加接口，"
    "第三步在前端界面增加导出按钮，另外还要编写测试并更新配置文档。",
]
SIMPLE = [
    "fix the typo in README.md",
    "What does mean() in pkg/core.py return for an empty list?",
    "run the tests",
    "Rename the variable n to count in pkg/core.py and then run the tests again please.",
    "修复 README 里的错别字",
    "这个函数是做什么的？",
    "运行测试，然后告诉我结果",
    "Explain how the configuration file is loaded, which function reads it and where the "
    "defaults come from, in a few sentences; I want to understand it before I change anything.",
]


@pytest.mark.parametrize("prompt", COMPLEX)
def test_a_long_multi_part_request_looks_complex(prompt: str) -> None:
    assert looks_complex(prompt)


@pytest.mark.parametrize("prompt", SIMPLE)
def test_a_one_liner_or_a_question_does_not(prompt: str) -> None:
    assert not looks_complex(prompt)


@pytest.mark.parametrize(
    ("prompt", "role", "task"),
    [
        ("@worker fix it", "worker", "fix it"),
        ("@Niobe  fix it\nplease", "worker", "fix it\nplease"),
        ("@link", "explorer", ""),
    ],
)
def test_handoff_names_a_sub_agent_at_the_start(prompt: str, role: str, task: str) -> None:
    found = handoff(prompt)
    assert found is not None and (found.role.name, found.task) == (role, task)


@pytest.mark.parametrize(
    "prompt", ["@./worker fix", "@README.md what is this", "@smith hi", "look at @worker", "@"]
)
def test_handoff_leaves_paths_user_roles_and_later_mentions_alone(prompt: str) -> None:
    assert handoff(prompt) is None


async def test_the_hint_shows_for_a_complex_request_only(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("ok"), text_reply("ok"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url)
    await runtime.run_turn(SIMPLE[0])
    assert not [e for e in rec.of(ev.CommandOutput) if e.command == "route"]
    await runtime.run_turn(COMPLEX[0])
    [hint] = [e for e in rec.of(ev.CommandOutput) if e.command == "route"]
    assert "/role orchestrator" in hint.text
    assert runtime.active_role == "direct"  # never switched by default
    assert [e.role for e in rec.of(ev.TurnStarted)] == ["direct", "direct"]
    await runtime.aclose()


async def test_routing_auto_switches_to_the_orchestrator(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(text_reply("ok"), text_reply("ok"))
    runtime, rec = open_runtime(tmp_path, llm_server.base_url, config={"routing": {"auto": True}})
    await runtime.run_turn(SIMPLE[4])
    await runtime.run_turn(COMPLEX[3])
    assert [e.role for e in rec.of(ev.TurnStarted)] == ["direct", "orchestrator"]
    assert runtime.active_role == "orchestrator"
    assert not [e for e in rec.of(ev.CommandOutput) if e.command == "route"]
    await runtime.aclose()


async def test_routing_auto_is_a_config_setting(tmp_path: Path, llm_server) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    assert runtime.config.model.routing.auto is False
    out = await runtime.submit("/config set routing.auto true")
    assert out.ok, out.text
    assert runtime.config.model.routing.auto is True
    await runtime.aclose()
