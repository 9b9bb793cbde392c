"""What a headless turn loads: ``smith -p`` never imports the TUI, the page converter or MCP.

These imports cost every headless start tens of milliseconds each (bench/headless.py);
they are loaded only where they are used (the app, ``web_fetch`` converting a page).
The run is the real ``smith`` binary against the scripted server, with Python's own
import log (``PYTHONPROFILEIMPORTTIME``) read from its stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.llm_server import ScriptedLLMServer, text_reply

SMITH = Path(sys.executable).with_name("smith")

NOT_ON_THE_HEADLESS_PATH = (
    "textual",  # the TUI
    "rich",  # Textual's renderer, and httpx's command-line client
    "click",  # httpx's command-line client
    "bs4",  # web_fetch's HTML parser
    "markdownify",  # web_fetch's HTML to Markdown
    "mcp",  # the MCP SDK (about 0.4 s), when no MCP server is configured
    # pydantic-settings is on the path (the config layers are its sources), its file
    # formats are not: the layers never ask its YAML, TOML or pyproject sources.
    "yaml",  # also the setup files' front matter, read only when such a file exists
    "tomllib",
)

LOADED_WHEN_USED = (
    # The symbol extractors' patterns (~10 ms), when a code tool first scans a file:
    "smith_tui.tools.builtin.code.symbols_python",
    "smith_tui.tools.builtin.code.symbols_lua",
    "smith_tui.tools.builtin.code.symbols_braces",
    # A per-hunk review's reader and writer, when a review runs (a turn only takes its note):
    "smith_tui.tools.checkpoints.hunk_review",
    # pydantic's plugin scan (entry points of every installed package), which smith turns off:
    "importlib.metadata",
)
"""Modules of ours a plain headless turn does not need (imported where they are used)."""


def _imported(stderr: str) -> set[str]:
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_a_headless_turn_imports_neither_the_tui_nor_the_page_converter(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        SMITH_MODEL="m",
        PYTHONPROFILEIMPORTTIME="1",
    )
    with ScriptedLLMServer(default_reply=text_reply("hello there")) as server:
        done = subprocess.run(
            [str(SMITH), "-p", "hi", "--api-url", server.base_url],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "hello there"
    imported = _imported(done.stderr)
    assert "smith_tui.engine.runtime" in imported  # the log is read correctly
    loaded = {name for name in imported if name.split(".")[0] in NOT_ON_THE_HEADLESS_PATH}
    assert loaded == set()
    assert imported & set(LOADED_WHEN_USED) == set()


NOT_BEFORE_THE_FIRST_FRAME = (
    # Loaded with the runtime, in the thread that opens it:
    "smith_tui.config.schema",  # the pydantic config schema
    "pydantic",
    "pydantic_settings",  # the config layers' sources (config/settings_sources.py)
    "smith_tui.store",  # peewee and the database
    "smith_tui.engine.runtime",  # the engine
    "smith_tui.engine.checkpoints",
    "smith_tui.engine.events",  # ~12 ms of dataclasses; the status line imports it late
    "httpx",  # the HTTP stack
    # Imported on the main thread with the panes, a moment after the first frame:
    "textual.widgets._markdown",  # Textual's Markdown widget (textual_compat: types only)
    "markdown_it",  # its parser
    "pygments",  # code highlighting
    "smith_tui.widgets.transcript",
    "smith_tui.widgets.activity",
    "smith_tui.widgets.dispatch_tree",
    "smith_tui.widgets.usage_pane",
    "smith_tui.widgets.matrix_rain",  # hidden while idle, mounted with the panes
    "smith_tui.widgets.rain",
    "smith_tui.widgets.todo_panel",  # likewise
    # The user's setup files, read in a thread a moment after the runtime is open:
    "yaml",  # front matter of command, skill and agent files
    "smith_tui.config.front_matter",
    "smith_tui.engine.command_files",
    "smith_tui.engine.instructions",
    # Imported when first opened:
    "smith_tui.app.screens",
    "smith_tui.app.first_run",
)
"""What the app loads after its first frame, never in the module it starts from
(bench/first_paint.py: each of these is milliseconds of every start)."""


def test_the_app_module_leaves_config_store_and_engine_for_after_the_first_frame() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import smith_tui.app.app"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = _imported(done.stderr)
    assert "textual.app" in imported  # the log is read correctly
    early = {
        name
        for name in imported
        if any(
            name == early or name.startswith(early + ".") for early in NOT_BEFORE_THE_FIRST_FRAME
        )
    }
    assert early == set()


def test_the_config_package_imports_pydantic_settings_only_when_it_loads(tmp_path: Path) -> None:
    # Importing the config (its schema, loader, overrides) does not pay for pydantic-settings;
    # the first load_effective_config does, and only then.
    script = (
        "import sys\n"
        "import smith_tui.config, smith_tui.config.schema, smith_tui.config.loader\n"
        "import smith_tui.config.overrides\n"
        "before = 'pydantic_settings' in sys.modules\n"
        "smith_tui.config.load_effective_config()\n"
        "print(before, 'pydantic_settings' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True"]
