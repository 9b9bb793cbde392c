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
    api_url: str,
    *,
    config: dict[str, Any] | None = None,
    model: str | None = "scripted-model",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    db_name: str = "smith.db",
    **options: Any,
) -> tuple[Runtime, Recorder]:
    """Open a runtime against ``api_url`` with fast retries, and a recorder subscribed."""
    base: dict[str, Any] = {
        "llm_config": {
            "api_url": api_url,
            "retry_backoff_ms": [10, 20],
            "stream_stall_timeout": 5,
        },
        "empty_response_retry_backoff_ms": [10, 20],
    }
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
            **options,
        ),
        env=env if env is not None else {},
    )
    recorder = Recorder()
    runtime.subscribe(recorder)
    return runtime, recorder


Factory = Callable[..., tuple[Runtime, Recorder]]
