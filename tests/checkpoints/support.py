"""Real git repositories in temporary folders for the checkpoint tests."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from smith_tui.tools.checkpoints.shadow_repo import Checkpoints

AUTHOR_ENV = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}


def git(repo: Path, *args: str) -> str:
    """Run git for test setup, isolated from the user's configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", **AUTHOR_ENV)
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(path: Path) -> Path:
    """A committed repository with text, binary, ignored and nested files."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def main():\n    return 1\n")
    (path / "src" / "util.py").write_text("def helper():\n    pass\n")
    (path / "README.md").write_text("# demo\n")
    (path / "logo.bin").write_bytes(bytes(range(256)) * 8)
    (path / ".gitignore").write_text("*.log\nbuild/\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    (path / "debug.log").write_text("ignored log\n")
    (path / "build").mkdir()
    (path / "build" / "out.o").write_bytes(b"\x7fELF ignored")
    return path


def tree_of(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except ``.git``, by relative path, with its bytes."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = Path(folder) / name
            found[path.relative_to(root).as_posix()] = (
                os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            )
    return found


def hash_git_dir(root: Path) -> dict[str, str]:
    """A digest of every file and folder under ``root/.git`` (content, mode and mtime)."""
    found = {}
    for folder, dirs, files in os.walk(root / ".git"):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            found[path.relative_to(root).as_posix()] = f"{digest} {info.st_mode} {info.st_mtime_ns}"
    return found


def checkpoints_for(root: Path, data: Path, **kwargs: int) -> Checkpoints:
    """The checkpoints of ``root`` with their shadow repository under ``data``."""
    return Checkpoints.for_project(data, root, **kwargs)
