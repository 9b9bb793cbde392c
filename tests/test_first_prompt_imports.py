"""What a session holds before its first prompt: the HTTP stack waits for the first request.

Opening the runtime (what the app does in its opening thread before the prompt takes
keys, and what ``smith -p`` does before its turn) imports no HTTP client: httpx with
httpcore, h11, anyio, the email and cookie modules are about 3 MB and 150 modules of the
RSS before the first prompt (docs/PERFORMANCE.md, "RSS before the first prompt"). The first
request imports them, and works: an answer, a model catalog, and a refused connection
reported in words. The app asks a repository's hook question with a modal screen it
imports only when there is a question, and loads the Markdown machinery of answers
(markdown-it, pygments, Textual's Markdown widget, about 3 MB) for the first answer it
shows. Each check runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.llm_server import ScriptedLLMServer, text_reply

HTTP_STACK = ("httpx", "httpcore", "h11", "anyio", "email", "http.client", "urllib.request")
"""Imported by the first request, not by opening a runtime."""

OPEN_THEN_ASK = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    HTTP_STACK = {stack!r}

    def loaded():
        return sorted(  # (None: a module marked absent, as smith_tui.cli marks httpx's CLI)
            name for name, module in sys.modules.items()
            if module is not None
            and any(name == top or name.startswith(top + ".") for top in HTTP_STACK)
        )

    async def main():
        import smith_tui.cli  # as the program starts: pydantic's plugin scan and httpx's CLI off
        from smith_tui.engine.runtime import Runtime, RuntimeOptions

        runtime = Runtime.open(RuntimeOptions(
            cwd=Path.cwd(), db_path=sys.argv[2], model="scripted-model",
            ephemeral={{"llm_config": {{"api_url": sys.argv[1], "retry_max_retries": 0}}}},
        ))
        report = {{"after_open": loaded()}}
        try:
            runtime.conversations.new()
            result = await runtime.run_turn("hi")
            report["answer"] = result.text
            report["error"] = result.error.to_dict()["message"] if result.error else None
            report["catalog"] = [model.id for model in await runtime.catalog()]
            report["after_request"] = loaded()
        finally:
            await runtime.aclose()
        print(json.dumps(report))

    asyncio.run(main())
    """
).format(stack=HTTP_STACK)


def _open_then_ask(tmp_path: Path, api_url: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-c", OPEN_THEN_ASK, api_url, str(tmp_path / "smith.db")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_the_runtime_opens_without_the_http_stack_and_the_first_request_brings_it(
    tmp_path: Path,
) -> None:
    with ScriptedLLMServer(default_reply=text_reply("hello there")) as server:
        server.catalog = {"object": "list", "data": [{"id": "scripted-model", "object": "model"}]}
        report = _open_then_ask(tmp_path, server.base_url)
    assert report["after_open"] == []
    assert report["answer"] == "hello there"
    assert report["error"] is None
    assert report["catalog"] == ["scripted-model"]
    after = report["after_request"]
    assert isinstance(after, list) and {"httpx", "httpcore", "h11", "anyio"} <= set(after)


def test_a_refused_first_request_still_says_what_failed(tmp_path: Path) -> None:
    # The error mapping imports httpx itself: a first request that never connects is still
    # reported in words (no NameError, no traceback).
    with ScriptedLLMServer() as server:
        closed = server.base_url  # nothing listens there once the server is stopped
    report = _open_then_ask(tmp_path, closed)
    assert report["after_open"] == []
    error = report["error"]
    assert isinstance(error, str) and "cannot connect to the API" in error, error
    assert report["catalog"] == []  # the app's price lookup finds nothing, quietly


ANSWER_MACHINERY = (
    "smith_tui.widgets.transcript.assistant_message",
    "smith_tui.widgets.transcript.streaming_markdown",
    "textual.widgets._markdown",
    "markdown_it",
    "pygments",
)
"""Loaded for the first answer (or a reopened conversation's), not before the first prompt."""

PILOT_WITHOUT_A_QUESTION = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    import smith_tui.cli  # as the program starts (httpx's command-line client off)
    from tests.app.app_harness import make_app, running, screen_text, submit, wait_until
    from tests.support.runtime import open_runtime

    MARKDOWN = {markdown!r}

    def markdown():
        return {{name for name in MARKDOWN if name in sys.modules}}

    async def main():
        runtime, _ = open_runtime(Path(sys.argv[1]), sys.argv[2], record=False)
        app = make_app(runtime)
        async with running(app) as pilot:
            await wait_until(pilot, lambda: "no tool calls yet" in screen_text(app),
                             what="the panes")
            screens = sorted(m for m in sys.modules if m.startswith("smith_tui.app.screens"))
            print("SCREENS", ",".join(screens) or "-")
            print("MARKDOWN", ",".join(sorted(markdown())) or "-")
            await submit(pilot, "hi")  # the first request, after the deferred imports
            await wait_until(pilot, lambda: "first answer" in screen_text(app), what="the answer")
            print("ANSWERED", ",".join(sorted(markdown())) or "-")

    asyncio.run(main())
    """
).format(markdown=ANSWER_MACHINERY)


def test_the_app_waits_for_its_first_prompt_without_modal_screens_or_markdown(
    tmp_path: Path,
) -> None:
    # No hook question, no answer yet: neither the modal screens nor the Markdown machinery
    # are loaded; the first prompt is answered, its answer bringing the machinery (Pilot,
    # in a fresh interpreter).
    root = Path(__file__).resolve().parent.parent
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    with ScriptedLLMServer(default_reply=text_reply("first answer")) as server:
        done = subprocess.run(
            [sys.executable, "-c", PILOT_WITHOUT_A_QUESTION, str(tmp_path), server.base_url],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
            cwd=root,
            timeout=90,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "SCREENS -" in done.stdout, done.stdout[-2000:]
    assert "MARKDOWN -" in done.stdout  # nothing of the answer's machinery yet
    assert f"ANSWERED {','.join(sorted(ANSWER_MACHINERY))}" in done.stdout


ON_FIRST_USE = (
    "smith_tui.engine.slash",
    "smith_tui.engine.slash_commands",
    "smith_tui.tools.builtin.plan",
)
"""Imported by the first ``/`` line and the first turn in plan mode, not by a plain turn."""

PLAIN_TURN_THEN_COMMAND_AND_PLAN = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    ON_FIRST_USE = {names!r}

    def loaded():
        return sorted(name for name in ON_FIRST_USE if name in sys.modules)

    async def main():
        import smith_tui.cli
        from smith_tui.engine import routing
        from smith_tui.engine.runtime import Runtime, RuntimeOptions

        runtime = Runtime.open(RuntimeOptions(
            cwd=Path.cwd(), db_path=sys.argv[2], model="scripted-model",
            ephemeral={{"llm_config": {{"api_url": sys.argv[1], "retry_max_retries": 0}}}},
        ))
        report = {{}}
        try:
            runtime.conversations.new()
            result = await runtime.run_turn("hi")
            report["answer"] = result.text
            report["after_turn"] = loaded()
            report["patterns_compiled"] = routing._patterns.cache_info().currsize
            out = await runtime.submit("/help")
            report["help"] = out.text
            report["after_command"] = loaded()
            runtime.set_permission_mode("plan")
            await runtime.run_turn("plan it")
            report["after_plan_turn"] = loaded()
            long = "first refactor the api module, then update the tests and the docs\\n" * 3
            report["complex"] = routing.looks_complex(long)
        finally:
            await runtime.aclose()
        print(json.dumps(report))

    asyncio.run(main())
    """
).format(names=ON_FIRST_USE)


def test_a_plain_turn_loads_no_slash_commands_nor_plan_tool_and_both_still_work(
    tmp_path: Path,
) -> None:
    # The runtime builds the command service for the first "/" line, the planner imports
    # present_plan for the first turn in plan mode, the routing heuristic compiles its word
    # lists for the first long prompt; each then works as before.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))
    with ScriptedLLMServer(default_reply=text_reply("hello there")) as server:
        done = subprocess.run(
            [sys.executable, "-c", PLAIN_TURN_THEN_COMMAND_AND_PLAN, server.base_url,
             str(tmp_path / "smith.db")],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        plan_tools = [tool["function"]["name"] for tool in server.chat_requests()[-1]["tools"]]
    assert report["answer"] == "hello there"
    assert report["after_turn"] == []
    assert report["patterns_compiled"] == 0  # "hi" is short: never counted
    assert "/help" in report["help"] and "/config" in report["help"]
    assert report["after_command"] == ["smith_tui.engine.slash", "smith_tui.engine.slash_commands"]
    assert report["after_plan_turn"] == sorted(ON_FIRST_USE)
    assert "present_plan" in plan_tools
    assert report["complex"] is True


OPEN_THEN_SET = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    async def main():
        import smith_tui.cli
        from smith_tui.config.schema import SmithConfig
        from smith_tui.config.settings_sources import SmithSettings
        from smith_tui.engine.runtime import Runtime, RuntimeOptions

        runtime = Runtime.open(RuntimeOptions(
            cwd=Path.cwd(), db_path=sys.argv[2], model="scripted-model",
            ephemeral={"llm_config": {"api_url": sys.argv[1]}},
        ))
        report = {
            "settings_built": SmithSettings.__pydantic_complete__,
            "schema_built": SmithConfig.__pydantic_complete__,
        }
        try:
            bad = await runtime.submit("/config set context_management.trim_threshold_pct 150")
            good = await runtime.submit("/config set context_management.trim_threshold_pct 60")
            report.update(
                bad=[bad.ok, bad.text], good=[good.ok, good.text],
                value=runtime.config.effective["context_management"]["trim_threshold_pct"],
                schema_built_after=SmithConfig.__pydantic_complete__,
            )
        finally:
            await runtime.aclose()
        print(json.dumps(report))

    asyncio.run(main())
    """
)


def test_the_config_is_validated_at_open_without_building_the_plain_schema(
    tmp_path: Path,
) -> None:
    # The layers are validated by SmithSettings (SmithConfig as a BaseSettings); SmithConfig's
    # own validator is built by the first check of a /config set value, which still refuses
    # a bad value with a message and takes a good one.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-c", OPEN_THEN_SET, "http://127.0.0.1:9/v1", str(tmp_path / "s.db")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["settings_built"] is True
    assert report["schema_built"] is False
    ok, text = report["bad"]
    assert ok is False and "trim_threshold_pct" in text, text
    assert report["good"][0] is True, report["good"]
    assert report["value"] == 60
    assert report["schema_built_after"] is True


def test_a_bad_config_file_is_still_refused_at_start_with_its_message(tmp_path: Path) -> None:
    # The control for the deferral above: the start still validates the whole config.
    config = tmp_path / "config.json"
    config.write_text('{"context_management": {"trim_threshold_pct": 150}}')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"))
    smith = [sys.executable, "-c", "import sys; from smith_tui.cli import main; sys.exit(main())"]
    done = subprocess.run(
        [*smith, "-p", "hi", "--config", str(config), "--api-url", "http://127.0.0.1:9/v1"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Invalid configuration" in done.stderr and "trim_threshold_pct" in done.stderr
    assert "Traceback" not in done.stderr
