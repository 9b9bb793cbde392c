"""The scripted tool loop the benchmarks share: a model that calls a shell tool N times.

The model's script is ``rounds`` replies, each one call of the program's shell tool running
``echo round N``, then an answer carrying :data:`LOOP_DONE`. :func:`script_loop` queues it
on a scripted Chat-Completions server (tests/support/llm_server.py) and :func:`check_loop`
says whether a run went through all of it: every reply asked for, and the last round's
output back in the model's last request. ``bench/peers.py`` runs it on each program and
``bench/headless.py --tool-rounds`` on smith beside :data:`BARE_LOOP`, a bare agent loop
with the same sandbox command line (:func:`sandbox_prefix`).

Per round, a program's figure is (the loop's run − the same program's one-shot) / rounds,
so the start-up both pay is not counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.support.llm_server import ScriptedLLMServer, ToolCall, text_reply

ROUNDS = 30
LOOP_DONE = "LOOP-DONE-5C1E"


def round_command(round_: int) -> str:
    """What the model runs in round ``round_`` (1-based)."""
    return f"echo round {round_}"


def script_loop(
    server: ScriptedLLMServer, shell_call: Callable[[str], ToolCall], rounds: int = ROUNDS
) -> None:
    """Queue the loop's replies on ``server``: ``rounds`` shell calls, then the answer."""
    for round_ in range(1, rounds + 1):
        server.enqueue(text_reply(tool_calls=[shell_call(round_command(round_))]))
    server.enqueue(text_reply(f"All rounds ran. {LOOP_DONE}"))


def check_loop(
    server: ScriptedLLMServer, requests: Sequence[Any], rounds: int = ROUNDS
) -> str | None:
    """What went wrong with a run of the loop on ``server`` (``None``: nothing).

    ``requests`` are the loop's chat requests (a program's side requests left out)."""
    if server.pending:
        return f"tool loop: {server.pending} scripted replies never asked for"
    if not requests or not isinstance(requests[-1], dict):
        return "tool loop: no request reached the server"
    results = [m for m in requests[-1].get("messages", []) if m.get("role") == "tool"]
    if rounds and (not results or f"round {rounds}" not in json.dumps(results[-1].get("content"))):
        return "tool loop: the last round's output did not reach the model"
    return None


def sandbox_prefix(project: Path) -> tuple[list[str], dict[str, str]]:
    """The command line smith's ``bash`` tool puts in front of ``bash -c CMD`` in
    ``project`` with the default sandbox settings, and the environment it runs with.
    Raises ``SystemExit`` when bubblewrap cannot be used here (nothing to compare)."""
    from smith_tui.config.schema import SandboxConfig
    from smith_tui.config.secrets import scrubbed_environ
    from smith_tui.tools.sandbox import bwrap_argv, sandbox_environ, sandbox_state

    settings = SandboxConfig()
    state = sandbox_state(settings)
    if not state.active or state.bwrap is None:
        raise SystemExit(f"the tool loop needs the bash sandbox: {state.reason or state.mode}")
    line = bwrap_argv(state.bwrap, ["bash", "-c"], cwd=project, project=project, settings=settings)
    env = sandbox_environ(scrubbed_environ())
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return line, env


BARE_LOOP = """
import json
import subprocess
import sys

import httpx

url, prefix, env = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object",
         "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]
messages = [{"role": "user", "content": "run the loop"}]
with httpx.Client(timeout=30) as client:
    while True:
        body = {"model": "m", "stream": True, "messages": messages, "tools": tools}
        text, calls = [], {}
        with client.stream("POST", url + "/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                for choice in json.loads(line[6:]).get("choices") or []:
                    delta = choice.get("delta") or {}
                    text.append(delta.get("content") or "")
                    for part in delta.get("tool_calls") or []:
                        call = calls.setdefault(part["index"], {"id": "", "name": "", "args": ""})
                        call["id"] = part.get("id") or call["id"]
                        function = part.get("function") or {}
                        call["name"] += function.get("name") or ""
                        call["args"] += function.get("arguments") or ""
        if not calls:
            break
        messages.append({"role": "assistant", "content": "".join(text) or None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"],
             "arguments": c["args"]}} for c in calls.values()]})
        for call in calls.values():
            command = json.loads(call["args"])["command"]
            done = subprocess.run([*prefix, command], env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, start_new_session=True)
            output = done.stdout + done.stderr + f"exit code {done.returncode}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
print("".join(text))
"""
"""A bare agent loop: the bare httpx one-shot of ``bench/headless.py`` that, while the model
calls ``bash``, runs each command under the sandbox command line it is given (argv 2, JSON)
with the environment it is given (argv 3), sends the output back and asks again."""
