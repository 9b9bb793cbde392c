"""The installed ``smith`` console script as a subprocess, in an isolated environment."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

SMITH = str(Path(sys.executable).with_name("smith"))
"""The real console script of this venv."""


def smith_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The process environment without smith's and the LLM's variables, XDG folders inside
    ``tmp_path`` and the scripted server's model; ``extra`` on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
        XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        SMITH_MODEL="scripted-model",
    )
    env.update(extra)
    return env


def server_args(api_url: str, db: Path, config: Path | str) -> list[str]:
    """The options naming the server, the database and the config file of a run."""
    return ["--api-url", api_url, "--db", str(db), "--config", str(config)]


def run_smith(
    args: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run ``smith ARGS`` to the end, output captured as text; ``stdin`` is its input
    (none: an empty, closed stdin)."""
    return subprocess.run(
        [SMITH, *args],
        cwd=cwd,
        env=dict(env),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_smith(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str], new_session: bool = False
) -> subprocess.Popen[str]:
    """Start ``smith ARGS`` with stdout and stderr piped as text and stdin closed;
    ``new_session`` puts it in a process group of its own (a signal to the group reaches
    the tools it started)."""
    return subprocess.Popen(
        [SMITH, *args],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
    )
