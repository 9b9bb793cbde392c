"""Streaming and long-session figures of the real ``smith`` in a terminal (tmux).

Run ``.venv/bin/python bench/tui.py [stream|session|all]`` (a few minutes). Each program
runs in its own tmux session (160x50) against a loopback Chat-Completions server that
sends on a fixed schedule, and is watched from outside with ``tmux capture-pane``; CPU
and RSS are read from ``/proc/<pid>/stat`` and ``status``:

* ``stream``: ``smith`` (the installed program, its own config and database) is asked
  "go" and answered with an ~80 KB Markdown answer (headings, lists, code blocks) at
  ~800 chunks of 4 characters per second; the baseline is a bare Textual app feeding
  ``Markdown.get_stream()`` the same stream. Printed: the server's send time, the time
  until the answer's last line is on screen, their ratio, CPU seconds per second of
  stream, RSS after it, and how long a key typed every half second took to show in the
  prompt.
* ``session``: a conversation of 20,000 messages is stored in a real SQLite file and
  opened with ``smith --resume ID`` beside the same program opening an empty database
  (alternating, median of ``--runs``); then RSS, how long each of 60 PageUp presses took
  to change the screen, and a 20 KB answer streamed at the bottom.

``BENCH_SOURCE=dir`` runs the ``smith_tui`` of another checkout (a ``git worktree``; as
installed, the packages ``smith_tui.widgets``, ``.styles`` and ``.data`` live at its top,
so link them into its ``smith_tui/`` first). ``BENCH_WORKDIR=dir`` keeps the programs' folders (config, databases) there;
``BENCH_PYSPY=file`` runs smith under ``py-spy record`` (raw format) into ``file`` (the
CPU and RSS figures of such a run are py-spy's, not smith's); ``BENCH_PROFILE=file`` runs it
under ``cProfile`` (its figures are then slowed by the profiler).

``fast``: 80 KB and 30 KB answers sent as fast as the server can (400-character chunks, no
pacing), interleaved, ``--runs`` of each: Enter → the answer's last line on screen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from figures import Figure, emit  # noqa: E402

MARKER = "END-OF-ANSWER-7F3A"
COLUMNS, ROWS = 160, 50
CHUNK_CHARS = 4
RATE = 800.0
PROBE_EVERY_S = 0.5
POLL_EVERY_S = 0.05
PROBE = "¤"  # typed into the prompt while streaming; not in the answer


# -- the answer ---------------------------------------------------------------------------
def long_answer(target_chars: int = 80_000, marker: str = MARKER) -> str:
    """A Markdown answer of about ``target_chars``: headings, prose, lists, code blocks."""
    parts: list[str] = []
    size = 0
    section = 0
    while size < target_chars:
        section += 1
        block = (
            f"## {section}. Changing the loader, step {section}\n\n"
            f"Step {section} touches `loader_{section}.py`: the function reads the file, "
            "checks the **schema** and returns a frozen mapping, so callers never see a "
            "half-built value. The paragraph is long enough to wrap on a wide terminal.\n\n"
            f"- read `config_{section}.toml` once\n"
            "- validate every key against the schema\n"
            "- report the first error with its line number\n\n"
            f"1. run the tests for step {section}\n2. commit\n\n"
            "```python\n"
            f"def load_{section}(path: str) -> Mapping[str, object]:\n"
            "    with open(path, encoding='utf-8') as handle:\n"
            "        data = parse(handle.read())\n"
            "\n"
            f"    return freeze(validate(data, step={section}))\n"
            "```\n\n"
        )
        parts.append(block)
        size += len(block)
    parts.append(f"That is all. {marker}\n")
    return "".join(parts)


# -- a paced loopback server ------------------------------------------------------------
@dataclass
class PacedServer:
    """Streams ``text`` as Chat-Completions SSE at ``rate`` chunks per second (0: as fast
    as the socket takes them).

    Chunks are sent on a fixed schedule (every chunk due by now goes out), so the send
    time does not depend on how precisely the event loop sleeps.
    """

    text: str
    chunk_chars: int = CHUNK_CHARS
    rate: float = RATE
    started_at: float = 0.0
    finished_at: float = 0.0
    port: int = 0
    requests: int = 0
    side: Callable[[dict[str, Any]], bool] | None = None
    """Requests it matches (a program's own side requests: titles, memory) get a short
    answer and leave the paced stream and its times alone."""
    side_requests: int = 0
    _ready: threading.Event = field(default_factory=threading.Event)
    _loop: asyncio.AbstractEventLoop | None = None
    _server: asyncio.AbstractServer | None = None

    def start(self) -> PacedServer:
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def send_time(self) -> float:
        return self.finished_at - self.started_at

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()

        async def serve() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()
            async with self._server:
                try:
                    await self._server.serve_forever()
                except asyncio.CancelledError:
                    pass

        loop.run_until_complete(serve())

    def _side_request(self, body: bytes) -> dict[str, Any] | None:
        """The request, when ``side`` says it is a side request (else None)."""
        if self.side is None:
            return None
        try:
            request = json.loads(body)
        except ValueError:
            return None
        return request if isinstance(request, dict) and self.side(request) else None

    async def _answer_side(self, request: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        """ "ok", streamed or as one JSON completion as the request asks."""
        if request.get("stream") is True:
            chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
            head = b"Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            payload = b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n"
        else:
            message = {"role": "assistant", "content": "ok"}
            completion = {
                "id": "side",
                "object": "chat.completion",
                "model": request.get("model", "bench"),
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
            payload = json.dumps(completion).encode()
            head = f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n".encode()
        writer.write(b"HTTP/1.1 200 OK\r\n" + head + b"Connection: close\r\n\r\n" + payload)
        await writer.drain()
        writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        lines = head.decode("latin-1").split("\r\n")
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        received = await reader.readexactly(length) if length else b""
        method, path = [*lines[0].split(), "", ""][:2]
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            # GET /models (smith asks for the catalog): the one model, and nothing else.
            body = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]})
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
            )
            await writer.drain()
            writer.close()
            return
        request = self._side_request(received)
        if request is not None:
            self.side_requests += 1
            await self._answer_side(request, writer)
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )
        self.requests += 1
        text, size = self.text, self.chunk_chars
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.started_at = time.time()
        for index, piece in enumerate(pieces):
            delay = start + index / self.rate - loop.time() if self.rate else 0.0
            if delay > 0:
                await writer.drain()
                await asyncio.sleep(delay)
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            writer.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        writer.write(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
        await writer.drain()
        self.finished_at = time.time()
        writer.close()


# -- the baseline app (run inside tmux) ----------------------------------------------------
async def stream_deltas(url: str, on_delta: Callable[[str], Awaitable[None]]) -> None:
    """POST a streaming chat request to ``url`` and hand each content delta to ``on_delta``."""
    import httpx

    request = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    async with (
        httpx.AsyncClient(timeout=None) as client,
        client.stream("POST", f"{url}/chat/completions", json=request) as response,
    ):
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            payload = line[6:]
            if payload == "[DONE]":
                break
            delta = json.loads(payload)["choices"][0]["delta"].get("content")
            if delta:
                await on_delta(delta)


def run_bare_app(url: str) -> None:
    """The baseline: a bare Textual app feeding ``Markdown.get_stream`` (nothing of ours:
    importing ``smith_tui.widgets`` would install our fixes to Textual). A key typed while
    it streams is shown in a line at the bottom, as smith's prompt shows it."""
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.widgets import Input, Markdown

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Markdown()
            yield Input()

        def on_mount(self) -> None:
            self.query_one(VerticalScroll).anchor()
            self.query_one(Input).focus()
            self.run_worker(self._stream())

        async def _stream(self) -> None:
            stream = Markdown.get_stream(self.query_one(Markdown))
            await stream_deltas(url, stream.write)
            await stream.stop()

    Bare().run()


# -- measuring from outside -----------------------------------------------------------------
def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def smith_command(
    workdir: Path, url: str, *args: str, extra_env: dict[str, str] | None = None
) -> list[str]:
    """The installed ``smith`` against ``url``, with its config and data under ``workdir``.

    With Python's bytecode cache, as installed programs run (this sandbox sets
    ``PYTHONDONTWRITEBYTECODE``, which would compile every module of ours on each start).
    ``extra_env`` is added to its environment (a ``PYTHONPATH`` in it goes first).
    """
    smith = str(Path(sys.executable).with_name("smith"))
    source = os.environ.get("BENCH_SOURCE")  # another checkout's smith_tui (see headless.py)
    extra = dict(extra_env or {})
    path = os.pathsep.join(filter(None, [extra.pop("PYTHONPATH", ""), source or ""]))
    env = {
        **({"PYTHONPATH": path} if path else {}),
        **extra,
        "PYTHONPYCACHEPREFIX": str(workdir / "pycache"),
        "XDG_CONFIG_HOME": str(workdir / "config"),
        "XDG_DATA_HOME": str(workdir / "data"),
    }
    profile = []
    if os.environ.get("BENCH_PYSPY"):  # profile smith (the CPU and RSS are then py-spy's)
        spy = str(Path(sys.executable).with_name("py-spy"))
        profile = [spy, "record", "-r", "100", "-f", "raw", "-o", os.environ["BENCH_PYSPY"], "--"]
    if os.environ.get("BENCH_PROFILE"):  # cProfile of smith's main thread into that file
        profile = [sys.executable, "-m", "cProfile", "-o", os.environ["BENCH_PROFILE"]]
    return [
        "env", "-u", "PYTHONDONTWRITEBYTECODE", *(f"{k}={v}" for k, v in env.items()),
        *profile, smith, "--api-url", url, "--model", "bench", *args,
    ]  # fmt: skip


@dataclass
class AppSession:
    """One program running in its own tmux session, watched with ``capture-pane``."""

    name: str
    pid: int
    started: float
    probes: int = 0

    @classmethod
    def start(cls, argv: list[str], cwd: Path, label: str = "app") -> AppSession:
        name = f"bench{os.getpid()}{label}"
        _tmux("kill-session", "-t", name)
        command = f"cd {shlex.quote(str(cwd))} && exec " + " ".join(shlex.quote(a) for a in argv)
        for _ in range(3):  # tmux may still be closing a session of that name
            started = time.time()
            pid = _tmux(
                "new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", name,
                "-x", str(COLUMNS), "-y", str(ROWS), command,
            ).strip()  # fmt: skip
            if pid:
                return cls(name=name, pid=int(pid), started=started)
            time.sleep(0.5)
        raise RuntimeError(f"tmux could not start {command!r}")

    def screen(self) -> str:
        return _tmux("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> float:
        sent = time.time()
        _tmux("send-keys", "-t", self.name, *keys)
        return sent

    def wait_for(self, *words: str, timeout_s: float = 60.0, every_s: float = 0.01) -> float:
        """Wall time when every one of ``words`` was first seen on screen."""
        deadline = time.time() + timeout_s
        screen = ""
        while time.time() < deadline:
            screen = self.screen()
            if all(word in screen for word in words):
                return time.time()
            time.sleep(every_s)
        raise TimeoutError(f"{self.name}: {words} not on screen within {timeout_s} s:\n{screen}")

    def probe(self, timeout_s: float = 3.0) -> float | None:
        """Type one ``PROBE`` character; seconds until it is on screen (None: not within
        ``timeout_s``). What a user waits for: the key read, handled and painted."""
        self.probes += 1
        sent = self.keys("-l", PROBE)
        deadline = sent + timeout_s
        while time.time() < deadline:
            if self.screen().count(PROBE) >= self.probes:
                return time.time() - sent
            time.sleep(0.005)
        return None

    def change_after(self, *keys: str, timeout_s: float = 3.0) -> float | None:
        """Send ``keys``; seconds until the screen differs from before (None: unchanged)."""
        before = self.screen()
        sent = self.keys(*keys)
        deadline = sent + timeout_s
        while time.time() < deadline:
            if self.screen() != before:
                return time.time() - sent
            time.sleep(0.005)
        return None

    def watch(
        self, marker: str, cap_s: float, probe: bool = True
    ) -> tuple[float | None, list[float | None]]:
        """Poll the screen until ``marker`` shows (or ``cap_s`` passes), typing a probe
        key every ``PROBE_EVERY_S`` meanwhile. Returns when the marker was first seen
        (None when capped) and each probe's latency."""
        latencies: list[float | None] = []
        deadline = time.time() + cap_s
        next_probe = time.time()
        while time.time() < deadline:
            if probe and time.time() >= next_probe:
                latencies.append(self.probe())
                next_probe += PROBE_EVERY_S
            if marker in self.screen():
                return time.time(), latencies
            time.sleep(POLL_EVERY_S)
        return None, latencies

    def stop(self) -> None:
        if os.environ.get("BENCH_PYSPY") or os.environ.get("BENCH_PROFILE"):
            # py-spy and cProfile write their file when smith exits
            self.keys("C-q")
            time.sleep(3.0)
        _tmux("kill-session", "-t", self.name)


def _latency_text(latencies: list[float | None]) -> str:
    answered = [x for x in latencies if x is not None]
    if not answered:
        return f"no key press answered (of {len(latencies)})"
    ms = sorted(x * 1000 for x in answered)
    missing = len(latencies) - len(ms)
    extra = f", {missing} unanswered" if missing else ""
    return (
        f"key latency median {statistics.median(ms):.0f} ms, p95 {_p95(ms):.0f} ms, "
        f"max {ms[-1]:.0f} ms ({len(ms)} presses{extra})"
    )


def _workdir() -> contextlib.AbstractContextManager[str]:
    """Where the programs run (their config, database, bytecode cache): ``BENCH_WORKDIR``
    (kept) or a temporary folder."""
    keep = os.environ.get("BENCH_WORKDIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        return contextlib.nullcontext(keep)
    return tempfile.TemporaryDirectory()


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


# -- the benchmarks -----------------------------------------------------------------------
@dataclass
class StreamFigures:
    """What one streaming run measured."""

    kind: str
    send_s: float
    visible_s: float | None
    cpu_s: float
    rss_mb: float
    latencies: list[float | None]
    cap_s: float

    def line(self) -> str:
        shown = (
            f"{self.visible_s:6.1f} s"
            if self.visible_s is not None
            else f"> {self.cap_s:.0f} s (cap)"
        )
        ratio = f"{self.visible_s / self.send_s:5.2f}x" if self.visible_s is not None else "  n/a"
        return (
            f"{self.kind:<6} send {self.send_s:5.1f} s | last line visible {shown} | "
            f"ratio {ratio} | CPU {self.cpu_s:5.1f} s ({self.cpu_s / self.send_s:.2f} of a core) "
            f"| RSS {self.rss_mb:.0f} MB | {_latency_text(self.latencies)}"
        )


def bench_stream(
    kind: str,
    answer: str,
    cap_s: float,
    workdir: Path,
    extra_env: dict[str, str] | None = None,
    label: str = "",
) -> StreamFigures:
    """Stream ``answer`` into ``smith`` (a prompt typed into the real app) or the ``bare``
    baseline, and time it. CPU is counted from the first chunk sent to the last probe.
    ``extra_env`` goes to smith's environment (see :func:`smith_command`); ``label`` names
    the run (default ``kind``)."""
    server = PacedServer(answer).start()
    label = label or kind
    if kind == "smith":
        # A database of its own per run: a second run on the first one's showed its answer.
        db = workdir / f"{label}-{time.monotonic_ns()}.db"
        argv = smith_command(workdir, server.url, "--db", str(db), extra_env=extra_env)
    else:
        argv = [sys.executable, str(Path(__file__).resolve()), "bare-app", "--url", server.url]
    app = AppSession.start(argv, workdir, label)
    try:
        if kind == "smith":
            app.wait_for("no tool calls yet", "Quit")  # the runtime is open, the panes are in
            time.sleep(1.0)
            app.keys("-l", "go")
            app.keys("Enter")
        while not server.started_at:
            time.sleep(0.01)
        cpu_before = _cpu_seconds(app.pid)
        seen, latencies = app.watch(MARKER, cap_s)
        while not server.finished_at:
            time.sleep(0.05)
        cpu = _cpu_seconds(app.pid) - cpu_before
        rss = _rss_mb(app.pid)
    finally:
        app.stop()
        server.stop()
    visible = None if seen is None else seen - server.started_at
    return StreamFigures(label, server.send_time, visible, cpu, rss, latencies, cap_s)


def stream_figures(
    cap_s: float = 200.0,
    chars: int = 80_000,
    kinds: tuple[str, ...] = ("smith", "bare"),
    runs: int = 1,
) -> list[StreamFigures]:
    """``smith`` (``runs`` times; its figures are the run of median CPU, with the min–max of
    all runs) and the bare Markdown baseline (once), on the same 80 KB answer."""
    answer = long_answer(chars)
    print(
        f"answer: {len(answer):,} chars in {len(answer) // CHUNK_CHARS:,} chunks of "
        f"{CHUNK_CHARS} at {RATE:.0f}/s; terminal {COLUMNS}x{ROWS}; load {_load()}"
    )
    results = []
    with _workdir() as tmp:
        for kind in kinds:
            for _ in range(runs if kind == "smith" else 1):
                figures = bench_stream(kind, answer, cap_s, Path(tmp))
                print(figures.line(), flush=True)
                results.append(figures)
    smiths = sorted((f for f in results if f.kind == "smith"), key=lambda f: f.cpu_s)
    by_kind = {figures.kind: figures for figures in results}
    ours, bare = (smiths[len(smiths) // 2] if smiths else None), by_kind.get("bare")
    spread = ""
    if len(smiths) > 1:
        cpus = [f.cpu_s / f.send_s for f in smiths]
        rss = sorted(f.rss_mb for f in smiths)
        p95s = sorted(
            _p95([x * 1000 for x in f.latencies if x is not None] or [0.0]) for f in smiths
        )
        spread = (
            f"median of {len(smiths)}: CPU {cpus[0]:.2f}–{cpus[-1]:.2f} of a core, "
            f"RSS {rss[0]:.0f}–{rss[-1]:.0f} MB, key p95 {p95s[0]:.0f}–{p95s[-1]:.0f} ms"
        )
        print(f"smith runs, {spread}")
    if ours and bare and ours.visible_s and bare.visible_s:
        print(f"bare / smith (time to last line): {bare.visible_s / ours.visible_s:.1f}x")
    if ours and bare and ours.cpu_s:
        print(f"bare / smith (CPU seconds): {bare.cpu_s / ours.cpu_s:.1f}x")
    print(f"load at the end {_load()}")
    if ours is not None:
        emit("tui", _stream_rows(ours, bare, len(answer), spread))
    return results


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _stream_rows(
    ours: StreamFigures, bare: StreamFigures | None, chars: int, spread: str = ""
) -> list[Figure]:
    """The figures of a stream run: visible/send ratio, CPU per second of stream, key p95."""
    size = f"{chars / 1000:.0f} KB at {RATE:.0f} chunks/s" + (f" ({spread})" if spread else "")
    name = "bare `Markdown.get_stream`"
    rows = []
    if ours.visible_s is not None:
        base = bare.visible_s / bare.send_s if bare and bare.visible_s else None
        ratio = ours.visible_s / ours.send_s
        rows.append(
            Figure(
                f"`smith` streaming {size}: last line visible / send time",
                ratio,
                "x",
                "≤ 1.2x",
                base,
                name,
                ratio=None if base is None else ratio / base,
                met=ratio <= 1.2,
            )
        )
    cpu = ours.cpu_s / ours.send_s
    base_cpu = bare.cpu_s / bare.send_s if bare else None
    rows.append(
        Figure(
            f"`smith` streaming {size}: CPU seconds per second of stream",
            cpu,
            "cores",
            "≤ 0.20",
            base_cpu,
            name,
            met=cpu <= 0.20,
        )
    )
    rows.append(
        Figure(
            f"`smith` streaming {size}: RSS after the stream",
            ours.rss_mb,
            "MB",
            "≤ 80 MB",
            bare.rss_mb if bare else None,
            name,
            met=ours.rss_mb <= 80,
        )
    )
    answered = [x * 1000 for x in ours.latencies if x is not None]
    if answered:
        unanswered = len(ours.latencies) - len(answered)
        base_answered = [x * 1000 for x in (bare.latencies if bare else []) if x is not None]
        rows.append(
            Figure(
                f"`smith` streaming {size}: typed key on screen, p95"
                + (f" ({unanswered} not within 3 s)" if unanswered else ""),
                _p95(answered),
                "ms",
                "< 100 ms",
                _p95(base_answered) if base_answered else None,
                name,
                met=_p95(answered) < 100 and not unanswered,
            )
        )
    return rows


FAST_CHUNK_CHARS = 400


def bench_fast_stream(
    answer: str, workdir: Path, run: int, cap_s: float = 60.0
) -> tuple[float, float, float]:
    """One ``smith`` answered with ``answer`` as fast as the server can (400-character
    chunks, no pacing). Returns (Enter → last line on screen, CPU seconds of smith over
    that time, RSS after) ."""
    server = PacedServer(answer, chunk_chars=FAST_CHUNK_CHARS, rate=0.0).start()
    argv = smith_command(workdir, server.url, "--db", str(workdir / f"fast{run}.db"))
    app = AppSession.start(argv, workdir, f"fast{run}")
    try:
        app.wait_for("no tool calls yet", "Quit")  # the runtime is open, the panes are in
        time.sleep(1.0)
        app.keys("-l", "go")
        app.wait_for("go", timeout_s=10.0)
        cpu_before = _cpu_seconds(app.pid)
        sent = app.keys("Enter")
        seen = app.wait_for(MARKER, timeout_s=cap_s, every_s=0.005)
        cpu = _cpu_seconds(app.pid) - cpu_before
        rss = _rss_mb(app.pid)
    finally:
        app.stop()
        server.stop()
    return seen - sent, cpu, rss


def fast_stream_figures(sizes: tuple[int, ...] = (80_000, 30_000), runs: int = 3) -> None:
    """Answers of each size sent at wire speed: Enter → last line, median and min–max of
    ``runs`` (sizes interleaved, so both see the same load)."""
    answers = {size: long_answer(size) for size in sizes}
    results: dict[int, list[tuple[float, float, float]]] = {size: [] for size in sizes}
    load_before = _load()
    with _workdir() as tmp:
        for run in range(runs):
            for size in sizes:
                figures = bench_fast_stream(answers[size], Path(tmp), run * len(sizes) + size)
                results[size].append(figures)
                wall, cpu, rss = figures
                print(
                    f"fast {size // 1000} KB run {run + 1}: Enter → last line {wall:.2f} s, "
                    f"CPU {cpu:.2f} s, RSS {rss:.0f} MB",
                    flush=True,
                )
    load = _load()
    print(f"load before {load_before}, after {load}")
    rows = []
    for size in sizes:
        walls = [w for w, _, _ in results[size]]
        cpus = [c for _, c, _ in results[size]]
        median = statistics.median(walls)
        target = 1.0 if size > 50_000 else 0.5
        span = f"{min(walls):.2f}–{max(walls):.2f} s"
        print(
            f"fast {size // 1000} KB: Enter → last line median {median:.2f} s ({span}), "
            f"CPU median {statistics.median(cpus):.2f} s"
        )
        rows.append(
            Figure(
                f"`smith` {size // 1000} KB answer at wire speed ({FAST_CHUNK_CHARS}-char chunks): "
                f"Enter → last line, median of {runs} ({span})",
                median,
                "s",
                f"≤ {target} s",
                met=median <= target,
            )
        )
    emit("tui", rows)


def stored_messages(count: int) -> list[dict[str, Any]]:
    """``count`` messages of a coding session: question, tool call, tool result, answer."""
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < count:
        call = {
            "id": f"call_{turn}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": f"ls src/{turn}"})},
        }
        out += [
            {"role": "user", "content": f"Question {turn}: what does step {turn} do?"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": f"call_{turn}",
                "name": "bash",
                "content": f"file_{turn}.py\nfile_{turn}_test.py",
                "metadata": {"ok": True, "duration_s": 0.12},
            },
            {
                "role": "assistant",
                "content": (
                    f"### Step {turn}\n\nIt reads `file_{turn}.py` and **checks** it.\n\n"
                    f"- one\n- two\n\n```python\nprint({turn})\n```\n"
                ),
            },
        ]
        turn += 1
    out = out[: count - 1]
    out.append({"role": "assistant", "content": f"The last stored answer. LAST-STORED-{count}"})
    return out


def build_conversation(db: Path, count: int) -> str:
    """Store a conversation of ``count`` messages in a real SQLite store; return its id."""
    from smith_tui.store import Store

    store = Store.open(db)
    try:
        conversation = store.conversations.create("bench", "long session")
        messages = stored_messages(count)
        for start in range(0, len(messages), 2000):
            store.conversations.append_messages(conversation, messages[start : start + 2000])
        return conversation
    finally:
        store.close()


def _open_time(argv: list[str], workdir: Path, words: tuple[str, ...]) -> float:
    """Seconds from starting ``argv`` in tmux until every one of ``words`` is on screen."""
    app = AppSession.start(argv, workdir, "open")
    try:
        return app.wait_for(*words, timeout_s=60.0) - app.started
    finally:
        app.stop()


def session_figures(count: int = 20_000, runs: int = 3) -> None:
    """Open a long stored conversation with ``smith --resume``, beside the same app opening
    an empty database; page up through it, then stream an answer at the bottom."""
    with _workdir() as tmp:
        workdir = Path(tmp)
        db = workdir / "smith.db"
        conversation = build_conversation(db, count)
        server = PacedServer(long_answer(20_000)).start()
        resume = smith_command(workdir, server.url, "--db", str(db), "--resume", conversation)
        last = f"LAST-STORED-{count}"
        ready = ("no tool calls yet", "Quit")  # the runtime is open and the panes are in

        def empty(run: int) -> list[str]:
            return smith_command(workdir, server.url, "--db", str(workdir / f"empty{run}.db"))

        _open_time(empty(-1), workdir, ready)  # warm the file cache and the bytecode
        _open_time(resume, workdir, (last,))
        empties, resumes = [], []
        for run in range(runs):  # alternating, so both see the same load
            empties.append(_open_time(empty(run), workdir, ready))
            resumes.append(_open_time(resume, workdir, (last,)))
        empty_s, open_s = statistics.median(empties), statistics.median(resumes)
        print(
            f"session: {count:,} stored messages, load {_load()}\n"
            f"  empty database: panes in after {', '.join(f'{x:.2f}' for x in empties)} s\n"
            f"  --resume:       last message on screen after "
            f"{', '.join(f'{x:.2f}' for x in resumes)} s (median {open_s / empty_s:.2f}x)"
        )
        rows = [
            Figure(
                f"`smith --resume` of {count:,} stored messages: last message on screen, "
                f"median of {runs}",
                open_s,
                "s",
                "≤ 1.5x, < 1.0 s",
                empty_s,
                "same app, empty database",
                met=open_s < 1.0 and open_s / empty_s <= 1.5,
            )
        ]
        app = AppSession.start(resume, workdir, "session")
        try:
            app.wait_for(last, timeout_s=60.0)
            time.sleep(2.0)
            rss = _rss_mb(app.pid)
            rows.append(Figure(f"{count:,} stored messages: RSS at open", rss, "MB"))
            # page up through the history (older pages load at the top)
            latencies: list[float | None] = []
            for _ in range(60):
                latencies.append(app.change_after("PageUp"))
                time.sleep(0.15)
            time.sleep(1.0)
            paged_rss = _rss_mb(app.pid)
            print(
                f"  RSS at open {rss:.0f} MB, after paging up 60 screens {paged_rss:.0f} MB\n"
                f"  paging up, screen changed after a PageUp: {_latency_text(latencies)}"
            )
            rows.append(
                Figure(
                    f"{count:,} stored messages: RSS after paging up 60 screens",
                    paged_rss,
                    "MB",
                    "≤ 120 MB",
                    met=paged_rss <= 120,
                )
            )
            answered = [x * 1000 for x in latencies if x is not None]
            if answered:
                rows.append(
                    Figure(
                        f"{count:,} stored messages: PageUp on screen, p95",
                        _p95(answered),
                        "ms",
                        "< 100 ms",
                        met=_p95(answered) < 100,
                    )
                )
            app.keys("End")
            time.sleep(0.5)
            app.keys("-l", "go")
            app.keys("Enter")
            while not server.started_at:
                time.sleep(0.01)
            seen, latencies = app.watch(MARKER, 120.0)
            while not server.finished_at:
                time.sleep(0.05)
            if seen is None:  # show what was on screen instead of the answer's end
                print("  (screen when giving up:)")
                print("\n".join("  | " + line for line in app.screen().splitlines()))
            visible = (seen - server.started_at) if seen else None
            ratio = f"{visible / server.send_time:.2f}x" if visible else "n/a"
            shown = f"{visible:.1f} s" if visible else "not seen"
            print(
                f"  20 KB answer at the bottom: send {server.send_time:.1f} s, "
                f"last line visible {shown} ({ratio}); {_latency_text(latencies)}\n"
                f"  RSS at the end {_rss_mb(app.pid):.0f} MB, CPU {_cpu_seconds(app.pid):.1f} s; "
                f"load {_load()}"
            )
            emit("tui", rows)
        finally:
            app.stop()
            server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    stream = sub.add_parser("stream", help="80 KB answer: smith and a bare Markdown app")
    stream.add_argument("--cap", type=float, default=200.0, help="give up on an app after this")
    stream.add_argument("--chars", type=int, default=80_000)
    stream.add_argument("--only", choices=("smith", "bare"), help="measure one (default: both)")
    stream.add_argument("--runs", type=int, default=1, help="smith runs (median, min–max)")
    session = sub.add_parser("session", help="20,000 stored messages: open, page up, stream")
    session.add_argument("--messages", type=int, default=20_000)
    session.add_argument("--runs", type=int, default=3)
    fast = sub.add_parser("fast", help="80 KB and 30 KB answers at wire speed: Enter → last line")
    fast.add_argument("--runs", type=int, default=3)
    fast.add_argument("--sizes", type=int, nargs="+", default=[80_000, 30_000])
    sub.add_parser("all", help="stream, fast and session")
    bare = sub.add_parser("bare-app", help="(internal) the baseline app run inside tmux")
    bare.add_argument("--url", required=True)
    args = parser.parse_args(argv)
    if args.command == "bare-app":
        run_bare_app(args.url)
        return 0
    if subprocess.run(["tmux", "-V"], capture_output=True).returncode != 0:
        print("tmux is required: install it (apt-get install tmux) and run again", file=sys.stderr)
        return 2
    if args.command in ("stream", "all", None):
        only = getattr(args, "only", None)
        kinds = (only,) if only else ("smith", "bare")
        stream_figures(
            getattr(args, "cap", 200.0),
            getattr(args, "chars", 80_000),
            kinds,
            getattr(args, "runs", 3 if args.command != "stream" else 1),
        )
    if args.command in ("fast", "all", None):
        fast_stream_figures(
            tuple(getattr(args, "sizes", (80_000, 30_000))), getattr(args, "runs", 3)
        )
    if args.command in ("session", "all", None):
        session_figures(getattr(args, "messages", 20_000), getattr(args, "runs", 3))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
