"""Build a real Runtime for tests: tmp database, tmp config, a git repo as cwd."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smith_tui.engine import events as ev
from smith_tui.engine.runtime import Runtime, RuntimeOptions


def make_git_repo(path: Path, origin: str | None = "https://example.com/acme/demo.git") -> Path:
    """Create a git repository with one commit at ``path`` (reused if it exists)."""
    if (path / ".git").is_dir():
        return path
    path.mkdir(parents=True, exist_ok=True)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(path),
    }
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    (path / "README.md").write_text("# demo\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "init"], check=True, env=env)
    if origin:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", origin], check=True)
    return path


@dataclass
class Recorder:
    """Collects every event a runtime emits."""

    events: list[ev.Event] = field(default_factory=list)

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)

    def of(self, kind: type[ev.Event]) -> list[Any]:
        """Events of one type, in order."""
        return [e for e in self.events if isinstance(e, kind)]


def write_config(path: Path, config: dict[str, Any]) -> Path:
    """Write a user config JSON file and return its path."""
    path.write_text(json.dumps(config))
    return path


def open_runtime(
    tmp_path: Path,
    api_url: str | None = None,
    *,
    config: dict[str, Any] | None = None,
    ephemeral: dict[str, Any] | None = None,
    model: str | None = "scripted-model",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    db_name: str = "smith.db",
    fast_retries: bool = True,
    record: bool = True,
    **options: Any,
) -> tuple[Runtime, Recorder]:
    """Open a real runtime: config file and database in ``tmp_path``, a git repo as cwd.

    ``api_url`` (None: no server configured) goes into the config file with ``config``
    merged over it; ``fast_retries`` adds millisecond backoffs so failing requests do not
    slow the test. ``ephemeral`` is the session-only config layer, ``options`` the other
    :class:`RuntimeOptions` fields. The recorder is subscribed unless ``record`` is False
    (a test that floods events and measures memory must not keep them all).
    """
    base: dict[str, Any] = {}
    if api_url is not None:
        base["llm_config"] = {"api_url": api_url}
    if fast_retries:
        base.setdefault("llm_config", {}).update(
            {"retry_backoff_ms": [10, 20], "stream_stall_timeout": 5}
        )
        base["empty_response_retry_backoff_ms"] = [10, 20]
    for key, value in (config or {}).items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    cfg_path = write_config(tmp_path / "config.json", base)
    repo = cwd or make_git_repo(tmp_path / "repo")
    runtime = Runtime.open(
        RuntimeOptions(
            cwd=repo,
            config_path=str(cfg_path),
            db_path=str(tmp_path / db_name),
            model=model,
            ephemeral=dict(ephemeral or {}),
            **options,
        ),
        env=env if env is not None else {},
    )
    recorder = Recorder()
    if record:
        runtime.bus.subscribe(recorder)
    return runtime, recorder


Factory = Callable[..., tuple[Runtime, Recorder]]
