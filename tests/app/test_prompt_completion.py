"""Completion through the real app and runtime: commands, settings, roles, models, @files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from smith_tui.config.permission_settings import PERMISSION_MODES
from smith_tui.widgets.completion.candidates import Completer, CompletionSources, rank
from smith_tui.widgets.completion.menu import CompletionMenu
from smith_tui.widgets.completion.project_files import ProjectFiles, list_with_walk
from smith_tui.widgets.prompt_input import PromptInput
from tests.app.app_harness import app_runtime, isolate_environment, make_app, running, wait_until


@pytest.fixture
def runtime(tmp_path, monkeypatch, llm_server):
    isolate_environment(monkeypatch, tmp_path)
    project = tmp_path / "project"
    (project / "src" / "pkg").mkdir(parents=True)
    (project / "src" / "pkg" / "engine.py").write_text("x = 1\n")
    (project / "README.md").write_text("# hi\n")
    (project / "build").mkdir()
    (project / "build" / "engine_out.py").write_text("ignored\n")
    (project / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    rt = app_runtime(tmp_path, api_url=llm_server.base_url)
    yield rt
    rt.store.close()


async def _candidates(pilot, app, keys: list[str]) -> list[str]:
    menu = app.screen.query_one(CompletionMenu)
    await pilot.press(*keys)
    await wait_until(pilot, lambda: menu.is_open, what="completion menu")
    return [c.value for c in menu.completion.candidates]


async def test_slash_lists_every_command_of_the_runtime(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        values = await _candidates(pilot, app, ["slash"])
        assert "/config" in values and "/quit" in values and "/pager" in values
        assert len(values) == len(runtime.services.command.names())


async def test_config_paths_complete_after_config_set(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        values = await _candidates(pilot, app, [*"/config set llm_config.re"])
        assert values[:2] == ["llm_config.recv_timeout", "llm_config.retry_backoff_ms"]
        await pilot.press("tab")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "/config set llm_config.recv_timeout "


async def test_roles_complete_after_role(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        assert await _candidates(pilot, app, [*"/role "]) == ["direct", "orchestrator"]


async def test_permission_modes_complete_after_mode(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        assert await _candidates(pilot, app, [*"/mode "]) == list(PERMISSION_MODES)
        menu = app.screen.query_one(CompletionMenu)
        assert {c.kind for c in menu.completion.candidates} == {"permission mode"}
        await pilot.press(*"au")
        await wait_until(
            pilot,
            lambda: [c.value for c in menu.completion.candidates] == ["auto-edit"],
            what="the one mode matching 'au'",
        )
        await pilot.press("tab")
        assert app.screen.query_one(PromptInput).text == "/mode auto-edit "


async def test_model_ids_come_from_the_server_catalog(runtime, llm_server) -> None:
    llm_server.catalog = {
        "object": "list",
        "data": [
            {"id": "qwen-coder-32b", "object": "model"},
            {"id": "llama-8b", "object": "model"},
        ],
    }
    app = make_app(runtime)
    async with running(app) as pilot:
        assert await _candidates(pilot, app, [*"/model "]) == ["llama-8b", "qwen-coder-32b"]
        assert any(r.path.endswith("/models") for r in llm_server.requests)


async def test_at_path_completes_project_files_honouring_gitignore(runtime) -> None:
    app = make_app(runtime)
    async with running(app) as pilot:
        values = await _candidates(pilot, app, [*"look at @eng"])
        assert values == ["@src/pkg/engine.py"]
        await pilot.press("enter")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "look at @src/pkg/engine.py "


async def test_at_the_start_offers_sub_agents_beside_files(runtime) -> None:
    agents = Path(runtime.options.cwd) / ".smith" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\nname: reviewer\ndescription: Reviews code\n---\nx\n")
    app = make_app(runtime)
    async with running(app) as pilot:
        # found in the background once the panes are up
        await wait_until(
            pilot, lambda: any(a.role.name == "reviewer" for a in runtime.setup.agents)
        )
        menu = app.screen.query_one(CompletionMenu)
        assert await _candidates(pilot, app, [*"@re"]) == ["@reviewer", "@explorer", "@README.md"]
        assert menu.completion.candidates[0].kind == "agent"
        assert "Reviews code" in menu.completion.candidates[0].about
        await pilot.press("escape", *["backspace"] * 3, *"see @re")
        await wait_until(pilot, lambda: menu.is_open, what="completion menu")
        assert [c.value for c in menu.completion.candidates] == ["@README.md"]  # not the start


def test_walk_fallback_honours_root_gitignore_and_skips_hidden(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "i.js").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.log").write_text("")
    (tmp_path / ".gitignore").write_text("node_modules/\n*.log\n")
    assert list_with_walk(tmp_path) == [".gitignore", "a.py"]


async def test_project_files_without_ripgrep_use_the_walk(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("")
    (tmp_path / "skip.tmp").write_text("")
    (tmp_path / ".gitignore").write_text("*.tmp\n")
    files = ProjectFiles(tmp_path, use_ripgrep=False)
    assert await files.files() == [".gitignore", "keep.txt"]


def test_rank_puts_prefix_then_component_then_substring_matches_first() -> None:
    names = ["tests/test_engine.py", "engine/core.py", "my_engine.txt", "src/engine.py", "o.py"]
    assert rank(names, "engine") == [
        "engine/core.py",  # prefix
        "src/engine.py",  # start of a path component
        "tests/test_engine.py",  # anywhere, in listing order
        "my_engine.txt",
    ]
    assert rank(names, "ENGINE/") == ["engine/core.py"]
    assert rank(names, "zzz") == []
    assert rank(names, "", limit=2) == names[:2]


async def test_no_completion_in_plain_text_or_second_line() -> None:
    completer = Completer(CompletionSources(commands=lambda: ["help"]))
    assert await completer.complete("hello /he", 0, 9) is None
    assert await completer.complete("x\n/he", 1, 3) is None
    found = await completer.complete("/he", 0, 3)
    assert found is not None and [c.value for c in found.candidates] == ["/help"]
    assert await completer.complete("/help", 0, 5) is None  # already complete
