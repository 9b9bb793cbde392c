"""The runtime's registry offers each role exactly the tools of the docs/DESIGN.md §3.2 matrix."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.engine.matrix import TOOL_MATRIX, allowed_tools
from smith_tui.tools.registry import ToolRegistry
from smith_tui.tools.spec import ToolArgs, ToolContext, ToolError, ToolOutput, ToolSpec
from tests.support.runtime import open_runtime


@pytest.mark.parametrize("role", ["direct", "orchestrator", "worker", "explorer"])
async def test_each_role_is_offered_its_matrix_row(tmp_path: Path, llm_server, role: str) -> None:
    runtime, _ = open_runtime(tmp_path, llm_server.base_url)
    # `skill` is registered only while there are skills: add one.
    skill = runtime.options.cwd / ".smith" / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill\n---\nDo it.\n")
    await runtime.refresh_setup()
    offered = {spec["function"]["name"] for spec in runtime.services.tool.llm_specs(role)}
    # `present_plan` is registered only for a turn in plan mode (engine/plans.py).
    plan_only = {"present_plan"}
    assert offered == set(allowed_tools(role)) - plan_only
    assert {s.name for s in runtime.services.tool.list()} == set(TOOL_MATRIX) - plan_only
    runtime.store.close()


async def _noop(args: dict, ctx: ToolContext) -> ToolOutput:
    return ToolOutput(content="ok")


def test_local_gate_applies_after_the_global_one() -> None:
    def policy(role: str, name: str) -> str:
        return "allow"

    registry = ToolRegistry(policy)
    registry.register(
        ToolSpec("only_w", "d", ToolArgs, _noop, role_allowlist=frozenset({"worker"}))
    )
    registry.register(
        ToolSpec("not_x", "d", ToolArgs, _noop, role_denylist=frozenset({"explorer"}))
    )
    assert [s.name for s in registry.list("worker")] == ["not_x", "only_w"]
    assert [s.name for s in registry.list("explorer")] == []
    with pytest.raises(ToolError, match="not available to the explorer role"):
        registry.resolve("not_x", "explorer")
    with pytest.raises(ToolError, match="unknown tool"):
        registry.resolve("nope", "worker")
