"""`smith acp` answers `initialize` before it loads the engine: what the process imports up
to serving is the CLI, the ACP SDK and the agent shell (smith_tui.acp.preload loads the rest
after the answer went out). The time itself is bench/acp_handshake.py's figure."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("smith_tui.engine", "smith_tui.store", "smith_tui.tools", "smith_tui.llm", "textual")

PROBE = """
import json, sys
import smith_tui.cli as cli
cli.build_parser().parse_args(["acp"])
import smith_tui.acp.server
print(json.dumps(sorted(sys.modules)))
"""


def test_serving_acp_imports_no_engine_before_initialize() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert "acp.schema" in modules and "smith_tui.acp.agent" in modules
    loaded = [m for m in modules if m.startswith(HEAVY)]
    assert loaded == [], f"loaded before the handshake: {loaded}"


def test_the_preload_loads_what_a_session_needs() -> None:
    """Control for the test above: the modules held back are the ones a session needs,
    and the preload really loads them."""
    probe = (
        "import sys, smith_tui.acp.preload as p; p._load();"
        "print('smith_tui.engine.runtime' in sys.modules, 'smith_tui.acp.session' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
