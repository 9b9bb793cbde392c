"""Plan mode over ACP: a session mode, and the plan a planning turn ends with reaching the
editor as the answer and as its (pending) plan; the real `smith acp` subprocess."""

from __future__ import annotations

from pathlib import Path

from acp import text_block

from tests.acp.test_acp_agent import EditorClient, agent
from tests.acp.test_acp_agent import repo as repo  # a fixture
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call

PLAN = {
    "title": "Tidy the notes",
    "steps": ["Sort notes.txt", "Drop the blank lines"],
    "files": ["notes.txt"],
    "risks": [],
}


async def test_plan_mode_is_a_session_mode_and_the_plan_reaches_the_editor(
    tmp_path: Path, repo: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("write", {"path": "notes.txt", "content": "x"})]),
        text_reply(tool_calls=[tool_call("present_plan", PLAN)]),
    )
    client = EditorClient()
    async with agent(tmp_path, repo, llm_server, client) as conn:
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        assert "plan" in [m.id for m in session.modes.available_modes]
        await conn.set_session_mode(session_id=session.session_id, mode_id="plan")
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("tidy")])
    assert done.stop_reason == "end_turn"
    assert (repo / "notes.txt").read_text() == "saved on disk\n"
    assert client.asked == []  # refused by the mode, not asked
    assert "# Tidy the notes" in client.message() and "1. Sort notes.txt" in client.message()
    plans = client.of("plan")
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("Sort notes.txt", "pending"),
        ("Drop the blank lines", "pending"),
    ]
