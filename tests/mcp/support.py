"""Configs for the real MCP servers the tests start (installed by the ``dev`` extra)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any


def time_server(**extra: Any) -> dict[str, Any]:
    """``mcp-server-time`` (tools get_current_time and convert_time), UTC as local zone."""
    return {
        "command": sys.executable,
        "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        **extra,
    }


def git_server(repo: Path, **extra: Any) -> dict[str, Any]:
    """``mcp-server-git`` on ``repo`` (git_status, git_log, ...)."""
    return {
        "command": sys.executable,
        "args": ["-m", "mcp_server_git", "--repository", str(repo)],
        **extra,
    }


def script_server(folder: Path, name: str, body: str, **extra: Any) -> dict[str, Any]:
    """A server command running the Python ``body`` (written to ``folder/name.py``)."""
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return {"command": sys.executable, "args": [str(path)], **extra}


HANGS = """
    import sys, time
    sys.stderr.write("hanging server: reading nothing, answering nothing\\n")
    sys.stderr.flush()
    time.sleep(600)
"""
"""A server that never answers the handshake."""

EXITS = """
    import sys
    sys.stderr.write("boom: this server exits at once\\n")
    sys.exit(3)
"""
"""A server that exits before the handshake."""
