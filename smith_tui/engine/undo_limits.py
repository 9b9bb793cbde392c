"""What ``/undo`` cannot take back: what a turn did beyond the files checkpoints hold.

A checkpoint holds the project's files. A command that installed packages, pushed to a
remote, reached the network, wrote a folder outside the project or ran without the sandbox,
and an MCP tool's call, leave effects that restoring the files does not touch. This reads
the undone turn's stored tool calls (its sub-agents' too) and names them, so that ``/undo``
never reads as more than it did. The classification is by the command's words and the
sandbox settings: it can miss an effect a command hides, and says "may" where it guesses.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from smith_tui.config.schema import SandboxConfig
from smith_tui.store import Store
from smith_tui.terminal_text import visible

MAX_LISTED = 12
_SPLIT = re.compile(r"&&|\|\||[;|&\n]")

_PUSH = (
    ("git", "push"),
    ("npm", "publish"),
    ("pnpm", "publish"),
    ("yarn", "publish"),
    ("twine", "upload"),
    ("docker", "push"),
    ("cargo", "publish"),
    ("gh", "release"),
    ("gh", "pr"),
)
_INSTALL = (
    ("pip", "install"),
    ("pip3", "install"),
    ("uv", "pip"),
    ("uv", "add"),
    ("poetry", "add"),
    ("npm", "install"),
    ("npm", "i"),
    ("npm", "add"),
    ("yarn", "add"),
    ("pnpm", "add"),
    ("apt", "install"),
    ("apt-get", "install"),
    ("brew", "install"),
    ("cargo", "install"),
    ("gem", "install"),
    ("go", "install"),
)
_NETWORK = frozenset({"curl", "wget", "ssh", "scp", "rsync", "nc", "ftp", "sftp"})
_GIT_NETWORK = frozenset({"fetch", "pull", "clone", "push", "ls-remote"})


@dataclass(frozen=True)
class Beyond:
    """One call whose effects a restore does not reach, and why."""

    what: str
    """The command or tool, as shown."""
    why: str


def _words(part: str) -> list[str]:
    try:
        words = shlex.split(part)
    except ValueError:
        words = part.split()
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # VAR=value prefixes
    while words and words[0] in ("sudo", "env", "command", "exec", "time", "nohup"):
        words = words[1:]
    if len(words) >= 3 and words[0].startswith("python") and words[1] == "-m":
        words = words[2:]  # python -m pip install
    return words


def _command_reasons(command: str, sandbox: SandboxConfig, sandboxed: bool | None) -> list[str]:
    confined = sandboxed if sandboxed is not None else sandbox.mode != "off"
    online = not confined or sandbox.network  # a sandbox without network stops a push
    reasons: list[str] = []
    for part in _SPLIT.split(command):
        words = _words(part.strip())
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        pair = (name, words[1] if len(words) > 1 else "")
        if pair in _PUSH and online:
            reasons.append("a publish or push: the remote keeps it")
        elif pair in _INSTALL:
            reasons.append("an install: what it installed stays")
        elif online and (name in _NETWORK or (name == "git" and pair[1] in _GIT_NETWORK)):
            reasons.append("it used the network")
    if not confined:
        reasons.append("it ran without the sandbox: what it changed outside the project stays")
    elif sandbox.writable:
        folders = ", ".join(str(folder) for folder in sandbox.writable)
        reasons.append(
            f"it could write {folders} (sandbox.writable), which checkpoints do not hold"
        )
    return list(dict.fromkeys(reasons))


def _arguments(call: Any) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    raw = function.get("arguments") if isinstance(function, dict) else None
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _conversation_calls(
    store: Store, conversation_id: str, turn_id: str | None
) -> list[tuple[Any, bool | None]]:
    messages = store.conversations.list_messages(conversation_id)
    sandboxed: dict[str, bool] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id:
            flag = (message.metadata or {}).get("sandboxed")
            if isinstance(flag, bool):
                sandboxed[message.tool_call_id] = flag
    calls: list[tuple[Any, bool | None]] = []
    for message in messages:
        if message.role != "assistant" or (turn_id is not None and message.turn_id != turn_id):
            continue
        for call in message.tool_calls or []:
            call_id = call.get("id") if isinstance(call, dict) else None
            calls.append((call, sandboxed.get(call_id) if isinstance(call_id, str) else None))
    return calls


def turn_calls(store: Store, conversation_id: str, turn_id: str) -> list[tuple[Any, bool | None]]:
    """The tool calls of one turn and of the sub-agents it dispatched (with whether each
    bash call ran sandboxed, where its result says so)."""
    calls = _conversation_calls(store, conversation_id, turn_id)
    turn = store.turns.get(turn_id)
    if turn is None:
        return calls
    end = turn.finished_at or float("inf")
    for child in store.conversations.children(conversation_id):
        if turn.started_at <= child.created_at <= end:
            calls += _conversation_calls(store, child.id, None)
    return calls


def beyond_undo(
    store: Store, conversation_id: str | None, turn_id: str | None, sandbox: SandboxConfig
) -> list[Beyond]:
    """The calls of the undone turn whose effects restoring its files does not take back."""
    if not conversation_id or not turn_id:
        return []
    found: list[Beyond] = []
    for call, sandboxed in turn_calls(store, conversation_id, turn_id):
        function = call.get("function") if isinstance(call, dict) else None
        name = str(function.get("name") or "") if isinstance(function, dict) else ""
        if name == "bash":
            command = str(_arguments(call).get("command") or "")
            reasons = _command_reasons(command, sandbox, sandboxed)
            if reasons:
                shown = command if len(command) <= 80 else command[:79] + "…"
                found.append(Beyond(f"`{visible(shown)}`", "; ".join(reasons)))
        elif name.startswith("mcp__"):
            found.append(Beyond(visible(name), "an MCP tool: what it did is the server's"))
    return found


def beyond_text(found: list[Beyond]) -> str:
    """The lines ``/undo`` adds ("" when the turn did nothing beyond its files)."""
    if not found:
        return ""
    lines = ["Not undone — these went beyond the project's files:"]
    lines += [f"  {item.what}: {item.why}" for item in found[:MAX_LISTED]]
    if len(found) > MAX_LISTED:
        lines.append(f"  … and {len(found) - MAX_LISTED} more")
    return "\n".join(lines)
