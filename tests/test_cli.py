"""The `smith` console script: version, help and the no-server message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SMITH = Path(sys.executable).with_name("smith")


def run_smith(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    full_env.update(env or {})
    return subprocess.run(
        [str(SMITH), *args], capture_output=True, text=True, env=full_env, timeout=60
    )


def test_version_prints_package_version() -> None:
    from smith_tui import __version__

    result = run_smith("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"smith {__version__}"


def test_help_lists_headless_flags() -> None:
    result = run_smith("--help")
    assert result.returncode == 0
    for flag in ("-p", "--model", "--output-format", "--api-url", "--db", "--config"):
        assert flag in result.stdout


def test_no_server_configured_names_the_settings(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path / "data")}
    result = run_smith("-p", "hello", env=env)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "llm_config.api_url" in result.stderr
    assert "LLM_API_KEY" in result.stderr
