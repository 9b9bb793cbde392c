"""ACP handshake: process start to ``initialize`` answered, ``smith acp`` beside a bare agent.

Run with ``.venv/bin/python bench/acp_handshake.py [--runs N]``. Each run starts a fresh
process, writes one ``initialize`` request to its stdin at once (as an editor does) and
stops the clock when the answer's line arrives on stdout; then stdin is closed and the
process waits for. The two programs alternate, so load on the machine hits both alike.

* ``smith acp --api-url URL`` in a fresh folder with its own config and database folders
  (the scripted Chat-Completions server answers on loopback; the handshake does not call it);
* the baseline: a Python script that imports the ACP SDK (``acp``) and answers
  ``initialize`` through its ``run_agent`` (the least any Python ACP agent does).

Both run with Python's bytecode cache (kept in a temporary ``PYTHONPYCACHEPREFIX``), as an
installed program does; ``--no-bytecode-cache`` adds a figure without it (an empty cache
prefix that nothing is written to: every module is compiled from source on every start, the
cold start an editor sees after an upgrade). The figure is the median; min–max is in its
text and the report.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from figures import Figure, emit, load_average  # noqa: E402

from tests.support.llm_server import ScriptedLLMServer, text_reply  # noqa: E402

BARE_AGENT = """
import asyncio

from acp import PROTOCOL_VERSION, run_agent
from acp.schema import InitializeResponse


class Agent:
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None,
                         **kwargs):
        return InitializeResponse(protocol_version=min(protocol_version, PROTOCOL_VERSION))


asyncio.run(run_agent(Agent()))
"""

TARGET_S = 0.5
INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}},
        }
    )
    + "\n"
).encode()


def _cpu_seconds(pid: int) -> float:
    """User + system CPU the process ``pid`` used so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def handshake(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Start ``argv``, send ``initialize``; (wall seconds until its answer arrived, CPU
    seconds the process had used by then)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(INITIALIZE)
    process.stdin.flush()
    line = process.stdout.readline()
    elapsed = time.perf_counter() - started
    cpu = _cpu_seconds(process.pid)
    process.stdin.close()
    process.wait(timeout=60)
    answer = json.loads(line) if line.strip() else {}
    if answer.get("id") != 1 or "result" not in answer:
        raise SystemExit(f"{argv[0]}: no initialize answer, got {line[:300]!r}")
    return elapsed, cpu


def figures(
    runs: int = 7, *, bytecode_cache: bool = True, source: str | None = None
) -> tuple[list[Figure], dict[str, list[float]]]:
    """Measure both programs ``runs`` times each, alternating (``source``: a checkout whose
    ``smith_tui`` smith runs, first on ``PYTHONPATH``, e.g. a ``git worktree`` of a commit)."""
    python = sys.executable
    smith = str(Path(python).with_name("smith"))
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedLLMServer(default_reply=text_reply("hello")) as server,
    ):
        bare = Path(tmp) / "bare_agent.py"
        bare.write_text(BARE_AGENT)
        work = Path(tmp) / "work"
        work.mkdir()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SMITH_", "LLM_"))},
            "XDG_CONFIG_HOME": f"{tmp}/cfg",
            "XDG_DATA_HOME": f"{tmp}/data",
            "SMITH_MODEL": "m",
            "PYTHONPYCACHEPREFIX": f"{tmp}/pycache",
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if source:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
        if not bytecode_cache:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTHONPYCACHEPREFIX"] = f"{tmp}/empty-pycache"
        ours_argv = [smith, "acp", "--api-url", server.base_url]
        bare_argv = [python, str(bare)]
        handshake(ours_argv, env, str(work))  # fills the bytecode cache, warms the files
        handshake(bare_argv, env, str(work))
        measured: dict[str, list[tuple[float, float]]] = {"smith acp": [], "bare": []}
        for _ in range(runs):
            measured["smith acp"].append(handshake(ours_argv, env, str(work)))
            measured["bare"].append(handshake(bare_argv, env, str(work)))
    times = {name: [wall for wall, _ in pairs] for name, pairs in measured.items()}
    cpu = {name: [used for _, used in pairs] for name, pairs in measured.items()}
    ours = statistics.median(times["smith acp"])
    base = statistics.median(times["bare"])
    ours_cpu = statistics.median(cpu["smith acp"])
    base_cpu = statistics.median(cpu["bare"])
    spread = f"{min(times['smith acp']):.3f}–{max(times['smith acp']):.3f} s"
    how = ("" if bytecode_cache else ", no bytecode cache") + (f", {source}" if source else "")
    return [
        Figure(
            f"`smith acp`: process start → `initialize` answered (median of {runs}{how}, {spread})",
            ours,
            "s",
            f"≤ {TARGET_S} s",
            base,
            "bare Python agent on the ACP SDK",
            met=ours <= TARGET_S,
        ),
        Figure(
            f"`smith acp`: CPU used by the time `initialize` is answered (median of {runs}{how})",
            ours_cpu,
            "s",
            "≤ 1.2x",
            base_cpu,
            "bare Python agent on the ACP SDK",
            met=ours_cpu <= 1.2 * base_cpu,
        ),
    ], {**times, **{f"{name} CPU": values for name, values in cpu.items()}}


def main() -> None:
    """Measure, print a report and the figures line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="also measure without .pyc files"
    )
    parser.add_argument(
        "--source",
        default=os.environ.get("BENCH_SOURCE") or None,
        help="run smith_tui from this checkout (PYTHONPATH; default $BENCH_SOURCE)",
    )
    args = parser.parse_args()
    if args.runs < 3:
        parser.error("--runs must be at least 3")
    load_before = load_average()
    found, times = figures(args.runs, source=args.source)
    runs = [("", times)]
    if args.no_bytecode_cache:
        cold, cold_times = figures(args.runs, bytecode_cache=False, source=args.source)
        found += cold
        runs.append((" (no bytecode cache)", cold_times))
    print(f"ACP handshake, {args.runs} runs each (load {load_before} -> {load_average()})")
    for how, measured in runs:
        for name, values in measured.items():
            print(
                f"  {name + how:30} median {statistics.median(values):.3f} s   "
                f"min {min(values):.3f} s   max {max(values):.3f} s"
            )
    emit("acp_handshake", found, runs=args.runs)


if __name__ == "__main__":
    main()
