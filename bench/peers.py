"""Smith beside the agents a user would pick instead, measured by the same driver.

Run with ``.venv/bin/python bench/peers.py [--runs N]`` (optional, never in CI; about 20
minutes at 3 runs; needs ``npm`` reaching its registry once, and tmux). It installs
OpenCode (npm ``opencode-ai``) and Qwen Code (npm ``@qwen-code/qwen-code``) at the versions
pinned below into a cache folder (``$SMITH_BENCH_PEERS``, default
``~/.cache/smith-bench/peers``; ``--latest`` takes the newest instead), gives each its own
home folder (config, data; auto-update off, and any global npm install it would still
attempt lands in that home), points it at the same loopback Chat-Completions servers the
other benchmarks use, and measures every program the same way:

* ``stream``: the 80 KB Markdown answer of ``bench/tui.py`` (headings, lists, code blocks)
  sent by its paced server at ~800 chunks of 4 characters per second; the program runs in
  tmux (``bench/tui.py``'s driver), "go" is typed and Enter pressed; measured: Enter → the
  answer's last line on screen, CPU seconds of the whole process tree from the first chunk
  to that line per second of the server's send time, and the peak RSS of the tree (sum of
  its processes' VmRSS, sampled every 0.25 s).
* ``ready``: launch in tmux → the program's prompt ready on screen.
* ``headless``: a one-shot (``smith -p hi``, ``opencode run hi``, ``qwen hi``) answered
  "hello" by the scripted server (tests/support/llm_server.py): wall and CPU (the process
  and every child it waited for).
* ``tools``: the same one-shot where the model calls the program's own shell tool 30 times
  (``echo round N``, one call per round) before answering; per round = (this run −
  the median one-shot of the same program) / 30. The run counts only when every scripted
  reply was asked for and the last round's output came back to the model.

Requests a program makes on its own beside the turn (OpenCode's session title, Qwen Code's
memory extraction after a turn) are answered "ok" without touching the scripted turn: a
request is the turn's when it offers the program's main agent tool (see ``MAIN_TOOL``).
Each measurement alternates the programs (run 1 of each, then run 2 ...), after one
warm-up launch and one warm-up one-shot each (first-run work: database migrations,
provider packages). Medians, min–max and the load averages seen are printed, and the
figures line for ``bench/run_all.py --peers``. A program that cannot be installed or
configured is a row saying why.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from figures import Figure, emit, load_average  # noqa: E402
from tool_loop import LOOP_DONE, ROUNDS, check_loop, script_loop  # noqa: E402
from tui import (  # noqa: E402
    CHUNK_CHARS,
    MARKER,
    RATE,
    AppSession,
    PacedServer,
    long_answer,
    smith_command,
)

from tests.support.llm_server import (  # noqa: E402
    RecordedRequest,
    ScriptedLLMServer,
    ToolCall,
    text_reply,
    tool_call,
)

PEERS_DIR = Path(os.environ.get("SMITH_BENCH_PEERS") or "~/.cache/smith-bench/peers").expanduser()
PINNED = {"opencode": "opencode-ai@1.18.33", "qwen": "@qwen-code/qwen-code@0.15.10"}
READY_TIMEOUT_S = 90.0
STREAM_CAP_S = 240.0
MODEL = "bench"


class Unavailable(Exception):
    """The program cannot be installed or configured here; the message says why."""


# -- what each program needs ------------------------------------------------------------------
@dataclass
class Program:
    """One program under test: how to start it, when it is ready, how it calls a shell."""

    key: str
    name: str
    home: Path
    project: Path
    version: str = ""
    main_tool: ClassVar[str] = "bash"
    """A request offering this tool is the turn's own (others are the program's side work)."""

    def prepare(self) -> None:
        """Install (if needed) and learn the version; raises :class:`Unavailable`."""

    def env(self, url: str) -> dict[str, str]:
        """Variables the program runs with, pointed at ``url``."""
        return {}

    def tui(self, url: str) -> list[str]:
        """The interactive program against ``url`` (run in tmux)."""
        raise NotImplementedError

    def headless(self, url: str, prompt: str) -> list[str]:
        """A one-shot turn of ``prompt`` against ``url``, printing the answer."""
        raise NotImplementedError

    def ready(self, screen: str) -> bool:
        """Whether ``screen`` shows the prompt ready for typing."""
        raise NotImplementedError

    def shell_call(self, command: str) -> ToolCall:
        """The model's call of this program's shell tool running ``command``."""
        return tool_call("bash", {"command": command})

    def is_side(self, request: dict[str, Any]) -> bool:
        """Whether a chat request is the program's own side work (not the scripted turn)."""
        return self.main_tool not in tool_names(request)

    def _with_env(self, url: str, argv: list[str]) -> list[str]:
        return ["env", *(f"{k}={v}" for k, v in self.env(url).items()), *argv]


def tool_names(request: dict[str, Any]) -> set[str]:
    """The names of the tools a chat request offers."""
    names = set()
    for tool in request.get("tools") or []:
        if isinstance(tool, dict):
            function = tool.get("function")
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                names.add(function["name"])
    return names


class Smith(Program):
    """The installed ``smith`` (bench/tui.py's command line), headless in its default mode
    (yolo: the ``bash`` calls run sandboxed). Each interactive start gets a database of its
    own: smith reopens a conversation of the last minutes, and every start here is a new one."""

    starts: int = 0

    def prepare(self) -> None:
        smith = str(Path(sys.executable).with_name("smith"))
        done = subprocess.run([smith, "--version"], capture_output=True, text=True)
        source = os.environ.get("BENCH_SOURCE") or str(ROOT)
        commit = subprocess.run(
            ["git", "-C", source, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        version = done.stdout.split()[-1] if done.returncode == 0 and done.stdout else "?"
        self.version = f"{version} (commit {commit})" if commit else f"{version} ({source})"

    def tui(self, url: str) -> list[str]:
        self.starts += 1
        return smith_command(self.home, url, "--db", str(self.home / f"tui{self.starts}.db"))

    def headless(self, url: str, prompt: str) -> list[str]:
        return smith_command(self.home, url, "--db", str(self.home / "smith.db"), "-p", prompt)

    def ready(self, screen: str) -> bool:
        return "no tool calls yet" in screen and "Quit" in screen


def npm_install(spec: str, folder: Path, binary: str) -> tuple[Path, str]:
    """Install the npm package ``spec`` (``name@version``) into ``folder`` unless that
    version is there; returns its binary and version. Raises :class:`Unavailable`."""
    name, wanted = split_spec(spec)
    manifest = folder / "node_modules" / name / "package.json"
    installed = _version_of(manifest)
    if (
        not installed
        or (wanted not in ("", "latest") and installed != wanted)
        or wanted == "latest"
    ):
        if shutil.which("npm") is None:
            raise Unavailable("npm is not installed")
        folder.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(
                ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder), spec],
                capture_output=True,
                text=True,
                timeout=900,
            )
        except subprocess.TimeoutExpired:
            raise Unavailable(f"`npm install {spec}` did not finish in 15 minutes") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise Unavailable(f"`npm install {spec}` failed: {last}")
        installed = _version_of(manifest)
    path = folder / "node_modules" / ".bin" / binary
    if not installed or not path.exists():
        raise Unavailable(f"`npm install {spec}` left no `{binary}` program")
    return path, installed


def split_spec(spec: str) -> tuple[str, str]:
    """An npm package spec's name and version: ``@scope/name@1.2`` → (``@scope/name``, ``1.2``);
    no version → ``""``."""
    name, _, version = spec[1:].partition("@")
    return spec[:1] + name, version


def _version_of(manifest: Path) -> str:
    try:
        return str(json.loads(manifest.read_text(encoding="utf-8")).get("version") or "")
    except (OSError, ValueError):
        return ""


class OpenCode(Program):
    """OpenCode: a custom provider (``@ai-sdk/openai-compatible``) at the server's URL in a
    config file named by ``OPENCODE_CONFIG``, bash allowed, no updates or model catalog."""

    main_tool: ClassVar[str] = "task"
    spec = PINNED["opencode"]

    def prepare(self) -> None:
        self.binary, self.version = npm_install(self.spec, PEERS_DIR / "opencode", "opencode")

    def env(self, url: str) -> dict[str, str]:
        config = self.home / "opencode.json"
        config.write_text(json.dumps(opencode_config(url)), encoding="utf-8")
        return {
            **_home_env(self.home),
            # Provider packages it installs on first use: kept between runs.
            "XDG_CACHE_HOME": str(PEERS_DIR / "opencode-cache"),
            "OPENCODE_CONFIG": str(config),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
        }

    def tui(self, url: str) -> list[str]:
        return self._with_env(url, [str(self.binary)])

    def headless(self, url: str, prompt: str) -> list[str]:
        return self._with_env(url, [str(self.binary), "run", prompt])

    def ready(self, screen: str) -> bool:
        return "Ask anything" in screen and MODEL in screen


def opencode_config(url: str) -> dict[str, Any]:
    """OpenCode's config for one OpenAI-compatible server at ``url`` serving ``MODEL``."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "bench": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Bench",
                "options": {"baseURL": url, "apiKey": "bench"},
                "models": {MODEL: {"name": MODEL}},
            }
        },
        "model": f"bench/{MODEL}",
        "small_model": f"bench/{MODEL}",
        "autoupdate": False,
        "share": "disabled",
        "permission": {"bash": "allow", "edit": "allow"},
    }


class QwenCode(Program):
    """Qwen Code: the ``openai`` auth type with ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/
    ``OPENAI_MODEL``, its settings in ``$HOME/.qwen/settings.json`` (auto-update, usage
    statistics and telemetry off); ``--yolo`` for the headless runs (its shell tool runs)."""

    main_tool: ClassVar[str] = "agent"
    spec = PINNED["qwen"]

    def prepare(self) -> None:
        self.binary, self.version = npm_install(self.spec, PEERS_DIR / "qwen", "qwen")
        settings = self.home / ".qwen" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(qwen_settings()), encoding="utf-8")

    def env(self, url: str) -> dict[str, str]:
        return {
            **_home_env(self.home),
            "OPENAI_API_KEY": "bench",
            "OPENAI_BASE_URL": url,
            "OPENAI_MODEL": MODEL,
        }

    def tui(self, url: str) -> list[str]:
        return self._with_env(url, [str(self.binary)])

    def headless(self, url: str, prompt: str) -> list[str]:
        return self._with_env(url, [str(self.binary), "--yolo", prompt])

    def ready(self, screen: str) -> bool:
        return "Type your message" in screen and "Initializing" not in screen

    def shell_call(self, command: str) -> ToolCall:
        return tool_call("run_shell_command", {"command": command, "description": "echo"})


def qwen_settings() -> dict[str, Any]:
    """Qwen Code's user settings: OpenAI-compatible auth, no updates, no statistics."""
    return {
        "$version": 3,
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": MODEL},
        "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }


def _home_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "NPM_CONFIG_PREFIX": str(home / "npm-global"),  # a self-update lands here
        "NO_UPDATE_NOTIFIER": "1",
    }


# -- servers and process trees ------------------------------------------------------------------
class RoutedServer(ScriptedLLMServer):
    """The scripted server, answering the requests ``side`` matches (a program's own side
    work: titles, memory, compaction summaries) with ``side_reply`` outside the script."""

    def __init__(
        self, side: Callable[[dict[str, Any]], bool], side_reply: str = "ok", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.side = side
        self.side_reply = side_reply
        self.side_requests = 0

    def __enter__(self) -> RoutedServer:
        self.start()
        return self

    async def _dispatch(self, request: RecordedRequest, writer: Any) -> None:
        body = request.json
        if request.method == "POST" and isinstance(body, dict) and self.side(body):
            self.side_requests += 1
            await self._serve(text_reply(self.side_reply), body.get("stream") is True, writer)
            return
        await super()._dispatch(request, writer)

    def turn_requests(self) -> list[dict[str, Any]]:
        """The chat requests that were the scripted turn's."""
        return [b for b in self.chat_requests() if isinstance(b, dict) and not self.side(b)]


def tree(pid: int) -> list[int]:
    """``pid`` and every live descendant."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                    parent = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def tree_cpu(pid: int) -> float:
    """CPU seconds of the tree: each live process's own time and its reaped children's."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for each in tree(pid):
        try:
            with open(f"/proc/{each}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / ticks


def tree_rss_mb(pid: int) -> float:
    """The sum of VmRSS over the tree (shared pages count once per process)."""
    total = 0
    for each in tree(pid):
        try:
            with open(f"/proc/{each}/status", encoding="utf-8") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total / 1024


def stop_app(app: AppSession) -> None:
    """Close the tmux session, then kill whatever of the program's tree outlived it."""
    pids = tree(app.pid)
    app.stop()
    deadline = time.time() + 5
    while time.time() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
        time.sleep(0.05)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# -- the measurements ---------------------------------------------------------------------------
@dataclass
class Samples:
    """Values of one measurement of one program, and the load seen while taking them."""

    values: dict[str, list[float]] = field(default_factory=dict)
    loads: list[float] = field(default_factory=list)
    problem: str = ""

    def add(self, **values: float) -> None:
        for name, value in values.items():
            self.values.setdefault(name, []).append(value)
        self.loads.extend(load_average()[:1])


def measure_ready(program: Program) -> dict[str, float]:
    """Launch in tmux → ready on screen."""
    with RoutedServer(program.is_side, default_reply="hello") as server:
        app = AppSession.start(program.tui(server.base_url), program.project, program.key)
        try:
            deadline, screen = app.started + READY_TIMEOUT_S, ""
            while time.time() < deadline:
                screen = app.screen()
                if program.ready(screen):
                    return {"ready_s": time.time() - app.started}
                time.sleep(0.01)
            raise Unavailable(f"not ready within {READY_TIMEOUT_S:.0f} s; screen:\n{screen}")
        finally:
            stop_app(app)


def run_headless(argv: list[str], cwd: Path, expect: str) -> tuple[float, float, str]:
    """Run ``argv`` to its end; (wall, CPU of it and its children, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or expect not in done.stdout:
        tail = (done.stdout + done.stderr)[-600:]
        raise Unavailable(f"one-shot exited {done.returncode} without {expect!r}: {tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def measure_headless(program: Program) -> dict[str, float]:
    """One-shot "hi" answered "hello"."""
    with RoutedServer(program.is_side, default_reply="hello") as server:
        wall, cpu, _ = run_headless(
            program.headless(server.base_url, "hi"), program.project, "hello"
        )
    return {"headless_s": wall, "headless_cpu_s": cpu}


def measure_tools(program: Program) -> dict[str, float]:
    """One-shot whose model calls the shell ``ROUNDS`` times, then answers."""
    with RoutedServer(program.is_side, default_reply="unexpected request") as server:
        script_loop(server, program.shell_call)
        argv = program.headless(server.base_url, "run the loop")
        wall, cpu, _ = run_headless(argv, program.project, LOOP_DONE)
        if problem := check_loop(server, server.turn_requests()):
            raise Unavailable(problem)
    return {"loop_s": wall, "loop_cpu_s": cpu}


def measure_stream(program: Program, answer: str) -> dict[str, float]:
    """The paced 80 KB answer in the program's TUI."""
    server = PacedServer(answer, side=program.is_side).start()
    app = AppSession.start(program.tui(server.url), program.project, program.key)
    try:
        deadline = app.started + READY_TIMEOUT_S
        while not program.ready(screen := app.screen()):
            if time.time() > deadline:
                raise Unavailable(f"not ready within {READY_TIMEOUT_S:.0f} s; screen:\n{screen}")
            time.sleep(0.05)
        time.sleep(1.0)
        app.keys("-l", "go")
        enter = app.keys("Enter")
        while not server.started_at:
            if time.time() > enter + 60:
                raise Unavailable("the answer was never asked for")
            time.sleep(0.005)
        cpu_before = tree_cpu(app.pid)
        peak, next_rss, seen = 0.0, 0.0, None
        cap = enter + STREAM_CAP_S
        while time.time() < cap:
            if time.time() >= next_rss:
                peak, next_rss = max(peak, tree_rss_mb(app.pid)), time.time() + 0.25
            if MARKER in app.screen():
                seen = time.time()
                break
            time.sleep(0.05)
        while not server.finished_at and time.time() < cap:
            time.sleep(0.05)
        cpu = tree_cpu(app.pid) - cpu_before
        peak = max(peak, tree_rss_mb(app.pid))
        if seen is None:
            raise Unavailable(f"the answer's last line not on screen within {STREAM_CAP_S:.0f} s")
    finally:
        stop_app(app)
        server.stop()
    return {
        "stream_s": seen - enter,
        "asked_s": server.started_at - enter,
        "after_send_s": seen - server.finished_at,
        "floor_s": server.send_time,
        "stream_cpu": cpu / server.send_time,
        "stream_rss_mb": peak,
    }


# -- the run ------------------------------------------------------------------------------------
MEASURES: dict[str, Callable[[Program], dict[str, float]]] = {
    "ready": measure_ready,
    "headless": measure_headless,
    "tools": measure_tools,
}


def programs(work: Path, latest: bool) -> list[Program]:
    """Smith, OpenCode and Qwen Code, each with its own home and project folder."""
    made: list[Program] = []
    for cls, key, name in (
        (Smith, "smith", "Smith"),
        (OpenCode, "opencode", "OpenCode"),
        (QwenCode, "qwen", "Qwen Code"),
    ):
        home, project = work / key / "home", work / key / "project"
        project.mkdir(parents=True)
        home.mkdir(parents=True)
        (project / "README.md").write_text("# A small project\n", encoding="utf-8")
        program = cls(key=key, name=name, home=home, project=project)
        if latest and isinstance(program, OpenCode | QwenCode):
            program.spec = program.spec.rsplit("@", 1)[0] + "@latest"
        made.append(program)
    return made


def run(runs: int, kinds: list[str], latest: bool) -> tuple[list[Program], dict[str, Samples]]:
    """Prepare and warm every program, then take ``runs`` interleaved rounds of each kind."""
    results: dict[str, Samples] = {}
    answer = long_answer()
    with tempfile.TemporaryDirectory() as tmp:
        everyone = programs(Path(tmp), latest)
        for program in everyone:
            samples = results[program.key] = Samples()
            try:
                program.prepare()
                measure_ready(program)  # warm-up: first-run migrations, provider packages
                measure_headless(program)
                print(f"{program.name} {program.version}: ready", flush=True)
            except Unavailable as exc:
                samples.problem = str(exc).splitlines()[0]
                print(f"{program.name}: not measured: {exc}", flush=True)
        for kind in kinds:
            for index in range(runs):
                for program in everyone:
                    samples = results[program.key]
                    if samples.problem:
                        continue
                    try:
                        if kind == "stream":
                            got = measure_stream(program, answer)
                        else:
                            got = MEASURES[kind](program)
                    except (Unavailable, subprocess.TimeoutExpired) as exc:
                        samples.problem = f"{kind}: {str(exc).splitlines()[0]}"
                        print(f"{program.name}: {samples.problem}", flush=True)
                        continue
                    samples.add(**got)
                    shown = ", ".join(f"{k} {v:.2f}" for k, v in got.items())
                    print(f"{kind} run {index + 1}: {program.name}: {shown}", flush=True)
    return everyone, results


def spread(values: list[float]) -> str:
    """``median (min–max)`` of ``values``."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


ROWS = (
    ("stream_s", "s", "80 KB stream: Enter → last line on screen"),
    ("asked_s", "s", "80 KB stream: Enter → the answer asked for"),
    ("stream_cpu", "cores", "80 KB stream: CPU seconds of the process tree per second of stream"),
    ("stream_rss_mb", "MB", "80 KB stream: peak RSS of the process tree"),
    ("ready_s", "s", "launch → ready"),
    ("headless_s", "s", "headless one-shot: wall"),
    ("headless_cpu_s", "s", "headless one-shot: CPU (with children)"),
    ("round_s", "s", f"{ROUNDS}-round tool loop: time per round"),
    ("round_cpu_s", "s", f"{ROUNDS}-round tool loop: CPU per round"),
)


def per_round(samples: Samples) -> None:
    """Add the tool loop's per-round figures: (loop − median one-shot) / ROUNDS."""
    values = samples.values
    for loop, one, out in (("loop_s", "headless_s", "round_s"), ("loop_cpu_s", "headless_cpu_s", "round_cpu_s")):  # fmt: skip
        if values.get(loop) and values.get(one):
            base = statistics.median(values[one])
            values[out] = [(x - base) / ROUNDS for x in values[loop]]


def figures(everyone: list[Program], results: dict[str, Samples]) -> list[Figure]:
    """One row per program and figure; peers' rows carry Smith's median as the baseline."""
    for samples in results.values():
        per_round(samples)
    smith = results["smith"].values
    floor = results["smith"].values.get("floor_s") or [
        v for s in results.values() for v in s.values.get("floor_s", [])
    ]
    rows: list[Figure] = []
    for program in everyone:
        samples = results[program.key]
        label = f"{program.name} {program.version}".strip()
        if samples.problem and not samples.values:
            rows.append(Figure(f"{label}: not measured: {samples.problem}", None, ""))
            continue
        load = f"load {min(samples.loads):.1f}–{max(samples.loads):.1f}" if samples.loads else ""
        for key, unit, text in ROWS:
            values = samples.values.get(key)
            if not values:
                continue
            extra = ""
            if key == "stream_s" and floor:
                extra = f", server floor {statistics.median(floor):.1f} s"
            if key.startswith("stream"):
                extra += f", {RATE:.0f} chunks of {CHUNK_CHARS} chars/s"
            figure = (
                f"{label}: {text} (median of {len(values)}, min–max "
                f"{min(values):.2f}–{max(values):.2f}{extra}; {load})"
            )
            base = smith.get(key) if program.key != "smith" else None
            rows.append(
                Figure(
                    figure,
                    statistics.median(values),
                    unit,
                    baseline=statistics.median(base) if base else None,
                    baseline_name="Smith, same run",
                )
            )
        if samples.problem:
            rows.append(Figure(f"{label}: not measured: {samples.problem}", None, ""))
    return rows


def main() -> int:
    """Measure, print the report and the figures line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--only", nargs="+", choices=("stream", "ready", "headless", "tools"), help="these only"
    )
    parser.add_argument("--latest", action="store_true", help="the newest peers, not the pinned")
    args = parser.parse_args()
    if subprocess.run(["tmux", "-V"], capture_output=True).returncode != 0:
        print("tmux is required: install it (apt-get install tmux) and run again", file=sys.stderr)
        return 2
    kinds = args.only or ["ready", "headless", "tools", "stream"]
    if "tools" in kinds and "headless" not in kinds:
        kinds.insert(kinds.index("tools"), "headless")  # per round needs the one-shot
    load_before = load_average()
    everyone, results = run(args.runs, kinds, args.latest)
    found = figures(everyone, results)
    print(f"peers, {args.runs} interleaved runs (load {load_before} -> {load_average()})")
    for samples, program in ((results[p.key], p) for p in everyone):
        for key, values in samples.values.items():
            print(f"  {program.name:10} {key:15} {spread(values)}")
    emit(
        "peers",
        found,
        runs=args.runs,
        versions={p.key: p.version for p in everyone},
        raw={p.key: results[p.key].values for p in everyone},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
