"""A sandboxed command as the editor's terminal should show it: ``smith-sandbox -c CMD``.

Editors title a terminal with the command line they were asked to run (Toad the whole
``terminal/create`` command and arguments), which for a sandboxed ``bash`` is bubblewrap's
long option list with the user's command at its very end. So the terminal is asked to run
``smith-sandbox -c CMD`` instead: a small launcher in a private folder put first on the
terminal's ``PATH``, which runs the sandbox command line handed over in
``$SMITH_SANDBOX_ARGV`` and nothing else. It fails closed: without that variable, or when
the variable's command is not the one it was asked to run, it runs nothing. Where the
launcher cannot run (a temp folder mounted noexec), the command line is sent as it is.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

NAME = "smith-sandbox"
"""The launcher's file name (what the terminal's title starts with)."""
ARGV_VARIABLE = "SMITH_SANDBOX_ARGV"
"""The variable holding the sandbox command line (a JSON list)."""

SCRIPT = """#!{python} -IS
# smith acp: run the sandboxed command line smith put in ${variable}, never anything else.
import json, os, sys
raw = os.environ.pop("{variable}", None)
try:
    argv = json.loads(raw) if raw else None
except ValueError:
    argv = None
if not (isinstance(argv, list) and len(argv) >= 3 and all(isinstance(a, str) for a in argv)
        and sys.argv[1:] == ["-c", argv[-1]]):
    sys.stderr.write("{name}: no sandbox command line for this command; nothing was run\\n")
    sys.exit(126)
os.execv(argv[0], argv)
"""

_lock = threading.Lock()
_folder: Path | None = None
_unusable = False


def folder() -> Path | None:
    """The private folder holding the launcher (made once per process, removed at exit);
    ``None`` when the launcher cannot run here (a temp folder mounted noexec)."""
    global _folder, _unusable
    with _lock:
        if _unusable:
            return None
        if _folder is None or not (_folder / NAME).is_file():
            made = Path(tempfile.mkdtemp(prefix="smith-acp-"))  # 0700, ours alone
            atexit.register(shutil.rmtree, made, True)
            script = made / NAME
            script.write_text(
                SCRIPT.format(python=sys.executable, variable=ARGV_VARIABLE, name=NAME),
                encoding="utf-8",
            )
            script.chmod(0o700)
            if not _runs(script):
                _unusable = True
                return None
            _folder = made
        return _folder


def _runs(script: Path) -> bool:
    """Whether ``script`` starts: without a hand-over it must refuse (exit 126)."""
    try:
        probe = subprocess.run(
            [str(script), "-c", "true"], env={}, capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 126 and b"nothing was run" in probe.stderr


def is_sandboxed(argv: list[str]) -> bool:
    """Whether ``argv`` is bubblewrap running ``bash -c CMD``."""
    return len(argv) >= 3 and Path(argv[0]).name == "bwrap" and argv[-2] == "-c"


def terminal_command(argv: list[str], env: dict[str, str]) -> tuple[str, list[str], dict[str, str]]:
    """What the editor's terminal is asked to run for ``argv``: a sandboxed command as
    ``smith-sandbox -c CMD`` (its environment says where the launcher is and what it runs),
    anything else as it is."""
    where = folder() if is_sandboxed(argv) else None
    if where is None:  # not sandboxed, or no launcher here: the command line as it is
        return argv[0], argv[1:], env
    path = env.get("PATH") or os.environ.get("PATH", "")
    shown_env = {**env, ARGV_VARIABLE: json.dumps(argv), "PATH": f"{where}{os.pathsep}{path}"}
    return NAME, ["-c", argv[-1]], shown_env
