"""A repository's own hooks run only after the user trusted them, asked once (Pilot).

The repository commits ``.smith/settings.json``; the first session there shows what it
would run in a modal. Nothing runs before the answer; after "trust" the hooks run, the
answer is kept in the user's data folder (never the repository) and the next session
does not ask; a changed file asks again; "don't run them" is remembered.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from smith_tui.app.screens.hook_trust_screen import HookTrustScreen
from smith_tui.engine.hooks.trust import TRUST_FILE_NAME
from smith_tui.engine.runtime import Runtime
from tests.app.app_harness import make_app, running, screen_text, submit, wait_until
from tests.engine.hooks.support import logged, python_hook
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo, open_runtime


def project_with_hooks(tmp_path: Path, marker_name: str = "prompt") -> tuple[Path, str]:
    """A git repository whose settings file has a UserPromptSubmit hook logging to tmp."""
    repo = make_git_repo(tmp_path / "repo")
    command = python_hook(tmp_path / "hooks", marker_name, "log(data)")
    settings = repo / ".smith" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"command": command}]}}))
    return repo, command


def session(tmp_path: Path, server: ScriptedLLMServer, repo: Path, n: int) -> Runtime:
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    runtime, _ = open_runtime(
        tmp_path, server.base_url, cwd=repo, env=env, db_name=f"s{n}.db", record=False
    )
    runtime.conversations.ensure()
    return runtime


def _words(screen: str) -> str:
    """The screen's words in reading order, the dialog's borders left out: where a line wraps
    depends on the tmp path's length (longer in a pytest -n worker), and a wrapped line
    brings the border characters between two words."""
    return " ".join(re.sub(r"[│▏▕▎▊▌╭╮╰╯]", " ", screen).split())


async def turn(pilot: Any, runtime: Runtime, text: str) -> None:
    before = len(runtime.conversations.messages)
    await submit(pilot, text)
    await wait_until(
        pilot,
        lambda: not runtime.busy and len(runtime.conversations.messages) >= before + 2,
        what="the turn's answer",
    )


async def test_project_hooks_run_only_after_trust_and_a_change_asks_again(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    repo, command = project_with_hooks(tmp_path)
    llm_server.enqueue(*(text_reply(f"answer {n}") for n in range(4)))

    # First session: the question shows the command; a turn before the answer runs nothing.
    runtime = session(tmp_path, llm_server, repo, 1)
    app = make_app(runtime)
    async with running(app) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HookTrustScreen), "the question")
        # Drawn, not only pushed: on a loaded machine the first frame of the modal is its rule.
        await wait_until(
            pilot, lambda: "UserPromptSubmit:" in screen_text(app), "the question's text"
        )
        text = _words(screen_text(app))
        assert "asks to run 1 hook" in text and "UserPromptSubmit:" in text
        assert "prompt.py" in text  # the command itself is shown
        assert app.screen.focused is not None and app.screen.focused.id == "hook-trust-no"
        assert logged(tmp_path / "hooks", "prompt") == []
        await pilot.click("#hook-trust-yes")
        await wait_until(pilot, lambda: not isinstance(app.screen, HookTrustScreen), "closed")
        await turn(pilot, runtime, "after trust")
    await runtime.aclose()
    (seen,) = logged(tmp_path / "hooks", "prompt")
    assert seen["prompt"] == "after trust"
    # The answer lives in the user's data folder, not in the repository.
    record = json.loads((tmp_path / "data" / "smith" / TRUST_FILE_NAME).read_text())
    assert list(record["projects"]) == [str(repo.resolve())]
    assert sorted(p.name for p in (repo / ".smith").iterdir()) == ["settings.json"]

    # Second session, same file: no question, the hook runs.
    runtime = session(tmp_path, llm_server, repo, 2)
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, HookTrustScreen)
        await turn(pilot, runtime, "second session")
    await runtime.aclose()
    assert [s["prompt"] for s in logged(tmp_path / "hooks", "prompt")][-1] == "second session"

    # The file changes: asked again, and the changed hooks do not run meanwhile.
    settings = repo / ".smith" / "settings.json"
    changed = json.loads(settings.read_text())
    changed["hooks"]["UserPromptSubmit"][0]["command"] = command + " --changed"
    settings.write_text(json.dumps(changed))
    runtime = session(tmp_path, llm_server, repo, 3)
    app = make_app(runtime)
    async with running(app) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HookTrustScreen), "asked again")
        await wait_until(
            pilot, lambda: "UserPromptSubmit:" in screen_text(app), "the question's text"
        )
        assert "--changed" in _words(screen_text(app))
        await pilot.press("n")  # don't run them: remembered
        await wait_until(pilot, lambda: not isinstance(app.screen, HookTrustScreen), "closed")
        await turn(pilot, runtime, "declined")
    await runtime.aclose()
    assert "declined" not in [s["prompt"] for s in logged(tmp_path / "hooks", "prompt")]

    runtime = session(tmp_path, llm_server, repo, 4)
    app = make_app(runtime)
    async with running(app) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, HookTrustScreen)  # the refusal was remembered
    await runtime.aclose()
