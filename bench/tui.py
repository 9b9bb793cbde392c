"""Streaming and long-session figures of the transcript in a real terminal (tmux).

Run ``.venv/bin/python bench/tui.py [stream|session|all]`` (a few minutes). Each app runs
in its own tmux session (160x50) and is watched from outside with ``tmux capture-pane``:

* ``stream``: an ~80 KB Markdown answer (headings, lists, code blocks) is sent by a
  loopback server at ~800 chunks per second into (a) a bare Textual app feeding
  ``Markdown.get_stream()`` and (b) a harness app hosting our ``Transcript``. Printed:
  the server's send time, the time until the answer's last line is on screen, their
  ratio, the app's CPU seconds (``/proc/<pid>/stat``) and how fast the app answered
  key presses sent every half second while it streamed.
* ``session``: a stored conversation of 20,000 messages (real SQLite store) opens in
  the harness; printed: time until the last message is on screen, RSS, key latency
  while paging up through the history, and a 20 KB answer streamed at the bottom.

Apps are started as ``bench/tui.py app --kind ...`` inside tmux; they log what they
did (with wall-clock times) to a file the bench reads afterwards. Environment
variables named ``BENCH_*`` reach the apps: ``BENCH_FLUSH`` (seconds between
transcript flushes), ``BENCH_PART`` (part size in characters), ``BENCH_FRAMES=1``
(log each layout+paint time), ``BENCH_GC=1`` (log each garbage collection),
``BENCH_LOGS=dir`` (keep the apps' logs there), ``BENCH_PROFILE=file`` (cProfile the app; it quits 2 s
after its stream).
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
    """Streams ``text`` as Chat-Completions SSE at ``rate`` chunks per second.

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

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length:
            await reader.readexactly(length)
        self.requests += 1
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )
        text, size = self.text, self.chunk_chars
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.started_at = time.time()
        for index, piece in enumerate(pieces):
            delay = start + index / self.rate - loop.time()
            if delay > 0:
                await writer.drain()
                await asyncio.sleep(delay)
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            writer.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()
        self.finished_at = time.time()
        writer.close()


# -- the apps (run inside tmux) -----------------------------------------------------------
async def stream_deltas(url: str, on_delta: Callable[[str], Awaitable[None] | None]) -> None:
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
                result = on_delta(delta)
                if result is not None:
                    await result


def run_app(kind: str, url: str, log_path: str, db: str | None, conversation: str | None) -> None:
    """The app measured in tmux: ``bare``, ``transcript`` or ``session``.

    The bare app imports nothing of ours: importing ``smith_tui.widgets`` installs our
    fixes to Textual (see ``widgets/textual_fixes.py``), and the baseline is Textual as is.
    """
    from textual import events
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import VerticalScroll
    from textual.widgets import Markdown

    from smith_tui.app.gc_policy import CHECK_EVERY_S, GcPolicy
    from smith_tui.engine import events as ev

    log = open(log_path, "a", buffering=1)

    def note(what: str) -> None:
        log.write(f"{what} {time.time():.6f}\n")

    class Probe(App[None]):
        """Common parts: a key probe (F5), the stream starter (F6), the log."""

        PAUSE_GC_ON_SCROLL = True
        BINDINGS = [  # noqa: RUF012
            Binding("f5", "probe", "probe", priority=True),
            Binding("f6", "stream", "stream", priority=True),
        ]

        def action_probe(self) -> None:
            note("key")

        def action_stream(self) -> None:
            self.run_worker(self._stream(), group="bench")

        async def _stream(self) -> None:
            note("request")
            await stream_deltas(url, self.deliver)
            await self.finish()
            note("received")
            if os.environ.get("BENCH_PROFILE"):
                self.set_timer(2.0, self.exit)

        def deliver(self, delta: str) -> Awaitable[None] | None:
            raise NotImplementedError

        async def finish(self) -> None:
            pass

    class Bare(Probe):
        """Textual's own Markdown, fed by ``Markdown.get_stream``."""

        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Markdown()

        def on_mount(self) -> None:
            self.query_one(VerticalScroll).anchor()
            self.md_stream = Markdown.get_stream(self.query_one(Markdown))
            note("ready")
            self.action_stream()

        def deliver(self, delta: str) -> Awaitable[None]:
            return self.md_stream.write(delta)

        async def finish(self) -> None:
            await self.md_stream.stop()

    from importlib.resources import files

    if kind != "bare":
        from smith_tui.widgets.transcript import Transcript

    class Harness(Probe):
        """Our Transcript, driven by engine events."""

        gc_policy = GcPolicy()

        CSS_PATH = str(files("smith_tui.styles") / "transcript.tcss")

        async def on_event(self, event: events.Event) -> None:
            if isinstance(event, (events.Key, events.MouseEvent)):
                self.gc_policy.input_seen()
            await super().on_event(event)

        def start_gc_policy(self) -> None:
            """The app's garbage-collection policy, as `SmithApp` runs it."""
            if os.environ.get("BENCH_GC_POLICY", "1") == "0":
                return
            self.gc_policy.start()
            self.set_interval(CHECK_EVERY_S, self.gc_policy.tick)

        def compose(self) -> ComposeResult:
            loader = None
            if db is not None:
                loader = self._loader()
            yield Transcript(
                loader=loader,
                flush_interval=float(os.environ.get("BENCH_FLUSH", "0.05")),
                part_chars=int(os.environ.get("BENCH_PART", "800")),
            )

        def _loader(self) -> Callable[[int, int], list[dict[str, Any]]]:
            from smith_tui.engine.persistence import message_dict
            from smith_tui.store import Store

            self.store = Store.open(db)

            def load(before: int, limit: int) -> list[dict[str, Any]]:
                found = self.store.conversations.list_messages(
                    conversation, before_position=before, limit=limit
                )
                return [message_dict(m) for m in found]

            return load

        async def on_mount(self) -> None:
            transcript = self.query_one(Transcript)
            if db is not None:
                from smith_tui.engine.persistence import message_dict

                started = time.perf_counter()
                stored = self.store.conversations.list_messages(conversation)
                messages = [message_dict(m) for m in stored]
                await transcript.load_messages(messages)
                note(f"loaded:{len(messages)}:{time.perf_counter() - started:.3f}")
                self.start_gc_policy()
                note("ready")
                return
            self.start_gc_policy()
            note("ready")
            self.action_stream()

        def deliver(self, delta: str) -> None:
            self.query_one(Transcript).handle_event(ev.TextDelta(turn_id="bench", text=delta))

        async def finish(self) -> None:
            transcript = self.query_one(Transcript)
            transcript.handle_event(ev.AssistantMessage(turn_id="bench", content=""))

    app = Bare() if kind == "bare" else Harness()
    if os.environ.get("BENCH_FRAMES"):  # log how long each layout+paint took (ms)
        from textual.screen import Screen

        refresh_layout = Screen._refresh_layout

        frame_profile = os.environ.get("BENCH_FRAME_PROFILE")
        profiler = None
        frames_profiled = [0]
        if frame_profile:
            import atexit
            import cProfile

            profiler = cProfile.Profile()
            atexit.register(lambda: profiler.dump_stats(frame_profile))

        def timed(self: Screen, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            try:
                return refresh_layout(self, *args, **kwargs)
            finally:
                if profiler is not None:
                    profiler.disable()
                    frames_profiled[0] += 1
                    if frames_profiled[0] % 50 == 0:  # the app is killed, not exited
                        profiler.dump_stats(frame_profile)
                note(f"frame:{(time.perf_counter() - started) * 1000:.1f}")

        Screen._refresh_layout = timed  # type: ignore[method-assign]
    if os.environ.get("BENCH_GC"):  # log each garbage collection: generation and ms
        import gc

        gc_started = [0.0]

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                gc_started[0] = time.perf_counter()
            else:
                ms = (time.perf_counter() - gc_started[0]) * 1000
                note(f"gc:{info['generation']}:{ms:.1f}")

        gc.callbacks.append(on_gc)
    profile = os.environ.get("BENCH_PROFILE")
    if profile:  # BENCH_PROFILE=file: profile the app; it quits 2 s after the stream
        import cProfile

        cProfile.runctx("app.run()", globals(), {"app": app}, profile)
    else:
        app.run()


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


def _read_log(path: Path) -> list[tuple[str, float]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        what, _, when = line.rpartition(" ")
        out.append((what, float(when)))
    return out


@dataclass
class AppSession:
    """One app running in its own tmux session."""

    name: str
    pid: int
    log: Path
    started: float

    @classmethod
    def start(cls, kind: str, url: str, log: Path, extra: list[str] | None = None) -> AppSession:
        name = f"bench{os.getpid()}{kind}"
        _tmux("kill-session", "-t", name)
        args = [sys.executable, str(Path(__file__).resolve()), "app", "--kind", kind]
        args += ["--url", url, "--log", str(log), *(extra or [])]
        env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("BENCH_")]
        command = "exec " + " ".join(shlex.quote(a) for a in ["env", *env, *args])
        started = time.time()
        pid = _tmux(
            "new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", name,
            "-x", str(COLUMNS), "-y", str(ROWS), command,
        ).strip()  # fmt: skip
        return cls(name=name, pid=int(pid), log=log, started=started)

    def screen(self) -> str:
        return _tmux("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> float:
        sent = time.time()
        _tmux("send-keys", "-t", self.name, *keys)
        return sent

    def wait_for_log(self, what: str, timeout_s: float = 60.0) -> float:
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            for entry, when in _read_log(self.log):
                if entry.startswith(what):
                    return when
            time.sleep(0.05)
        raise TimeoutError(f"{self.name}: no {what!r} in the app's log within {timeout_s} s")

    def watch(
        self, marker: str, cap_s: float, probe: bool = True
    ) -> tuple[float | None, list[float]]:
        """Poll the screen until ``marker`` shows (or ``cap_s`` passes); probe keys meanwhile.

        Returns the wall time the marker was first seen (None when capped) and the
        wall times the probe keys were sent.
        """
        sent: list[float] = []
        deadline = time.time() + cap_s
        next_probe = time.time()
        while time.time() < deadline:
            if probe and time.time() >= next_probe:
                sent.append(self.keys("F5"))
                next_probe += PROBE_EVERY_S
            if marker in self.screen():
                return time.time(), sent
            time.sleep(POLL_EVERY_S)
        return None, sent

    def key_latencies(self, sent: list[float]) -> list[float]:
        """Latency of each probe (handled - sent), in order; unanswered probes are dropped."""
        handled = [when for what, when in _read_log(self.log) if what == "key"]
        return [h - s for s, h in zip(sent, handled, strict=False)]

    def stop(self) -> None:
        _tmux("kill-session", "-t", self.name)


def _latency_text(latencies: list[float], sent: int) -> str:
    if not latencies:
        return f"no key press answered (of {sent})"
    ms = sorted(x * 1000 for x in latencies)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    missing = sent - len(ms)
    extra = f", {missing} unanswered" if missing else ""
    return (
        f"key latency median {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, "
        f"max {ms[-1]:.0f} ms ({len(ms)} presses{extra})"
    )


def _workdir() -> contextlib.AbstractContextManager[str]:
    """Where the apps' logs go: ``BENCH_LOGS`` (kept) or a temporary folder."""
    keep = os.environ.get("BENCH_LOGS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        return contextlib.nullcontext(keep)
    return tempfile.TemporaryDirectory()


# -- the benchmarks -----------------------------------------------------------------------
@dataclass
class StreamFigures:
    """What one streaming run measured."""

    kind: str
    send_s: float
    visible_s: float | None
    cpu_s: float
    latencies: list[float]
    probes: int
    cap_s: float

    def line(self) -> str:
        shown = (
            f"{self.visible_s:6.1f} s"
            if self.visible_s is not None
            else f"> {self.cap_s:.0f} s (cap)"
        )
        ratio = f"{self.visible_s / self.send_s:5.2f}x" if self.visible_s is not None else "  n/a"
        return (
            f"{self.kind:<11} send {self.send_s:5.1f} s | last line visible {shown} | "
            f"ratio {ratio} | CPU {self.cpu_s:6.1f} s | "
            f"{_latency_text(self.latencies, self.probes)}"
        )


def bench_stream(kind: str, answer: str, cap_s: float, workdir: Path) -> StreamFigures:
    """Stream ``answer`` into the ``bare`` or ``transcript`` app and time it."""
    server = PacedServer(answer).start()
    log = workdir / f"{kind}.log"
    app = AppSession.start(kind, server.url, log)
    try:
        app.wait_for_log("ready")
        while not server.started_at:
            time.sleep(0.01)
        seen, sent = app.watch(MARKER, cap_s)
        while not server.finished_at:
            time.sleep(0.05)
        time.sleep(1.0)  # let the last probes be answered
        cpu = _cpu_seconds(app.pid)
        latencies = app.key_latencies(sent)
    finally:
        app.stop()
        server.stop()
    visible = None if seen is None else seen - server.started_at
    return StreamFigures(kind, server.send_time, visible, cpu, latencies, len(sent), cap_s)


def stream_figures(
    cap_s: float = 200.0, chars: int = 80_000, kinds: tuple[str, ...] = ("transcript", "bare")
) -> list[StreamFigures]:
    """The bare Markdown baseline and our transcript, on the same 80 KB answer."""
    answer = long_answer(chars)
    print(
        f"answer: {len(answer):,} chars in {len(answer) // CHUNK_CHARS:,} chunks of "
        f"{CHUNK_CHARS} at {RATE:.0f}/s; terminal {COLUMNS}x{ROWS}"
    )
    results = []
    with _workdir() as tmp:
        for kind in kinds:
            figures = bench_stream(kind, answer, cap_s, Path(tmp))
            print(figures.line(), flush=True)
            results.append(figures)
    by_kind = {figures.kind: figures for figures in results}
    ours, bare = by_kind.get("transcript"), by_kind.get("bare")
    if ours and bare and ours.visible_s and bare.visible_s:
        print(f"bare / ours (time to last line): {bare.visible_s / ours.visible_s:.1f}x")
    if ours and bare and ours.cpu_s:
        print(f"bare / ours (CPU seconds): {bare.cpu_s / ours.cpu_s:.1f}x")
    if ours is not None:
        emit("tui", _stream_rows(ours, bare, len(answer)))
    return results


def _stream_rows(ours: StreamFigures, bare: StreamFigures | None, chars: int) -> list[Figure]:
    """The figures of a stream run: visible/send ratio, CPU per second of stream, key p95."""
    size = f"{chars / 1000:.0f} KB at {RATE:.0f} chunks/s"
    name = "bare `Markdown.get_stream`"
    rows = []
    if ours.visible_s is not None:
        base = bare.visible_s / bare.send_s if bare and bare.visible_s else None
        ratio = ours.visible_s / ours.send_s
        rows.append(
            Figure(
                f"stream {size}: last line visible / send time",
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
            f"stream {size}: CPU seconds per second of stream",
            cpu,
            "cores",
            "≤ 0.35",
            base_cpu,
            name,
            met=cpu <= 0.35,
        )
    )
    if ours.latencies:
        p95 = sorted(ours.latencies)[int(0.95 * (len(ours.latencies) - 1))] * 1000
        base_p95 = None
        if bare and bare.latencies:
            base_p95 = sorted(bare.latencies)[int(0.95 * (len(bare.latencies) - 1))] * 1000
        rows.append(
            Figure(
                f"stream {size}: key press answered, p95",
                p95,
                "ms",
                "< 100 ms",
                base_p95,
                name,
                met=p95 < 100,
            )
        )
    return rows


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


def session_figures(count: int = 20_000) -> None:
    """Open a long stored conversation, page up through it, then stream at the bottom."""
    with _workdir() as tmp:
        workdir = Path(tmp)
        db = workdir / "smith.db"
        conversation = build_conversation(db, count)
        server = PacedServer(long_answer(20_000)).start()
        log = workdir / "session.log"
        app = AppSession.start(
            "session", server.url, log, ["--db", str(db), "--conversation", conversation]
        )
        try:
            seen, _ = app.watch(f"LAST-STORED-{count}", 120.0, probe=False)
            loaded = app.wait_for_log("loaded")
            entry = next(what for what, _ in _read_log(log) if what.startswith("loaded"))
            _, messages, load_s = entry.split(":")
            time.sleep(2.0)
            rss = _rss_mb(app.pid)
            open_s = (seen - app.started) if seen else float("nan")
            rows = [
                Figure(
                    f"{count:,} stored messages: last message on screen",
                    open_s,
                    "s",
                    "< 1.0 s",
                    met=open_s < 1.0,
                ),
                Figure(f"{count:,} stored messages: RSS at open", rss, "MB"),
            ]
            print(
                f"session    {int(messages):,} messages: on screen after {open_s:.2f} s "
                f"(load_messages {float(load_s):.2f} s, process start to loaded "
                f"{loaded - app.started:.2f} s) | RSS {rss:.0f} MB"
            )
            # page up through the history (older pages load at the top), probing keys
            sent: list[float] = []
            for _ in range(60):
                app.keys("PageUp")
                time.sleep(0.1)
                sent.append(app.keys("F5"))
                time.sleep(0.15)
            time.sleep(1.0)
            latencies = app.key_latencies(sent)
            print(f"           paging up 60 screens: {_latency_text(latencies, len(sent))}")
            paged_rss = _rss_mb(app.pid)
            print(f"           RSS after paging {paged_rss:.0f} MB")
            rows.append(
                Figure(
                    f"{count:,} stored messages: RSS after paging up 60 screens",
                    paged_rss,
                    "MB",
                    "≤ 120 MB",
                    met=paged_rss <= 120,
                )
            )
            if latencies:
                p95 = sorted(latencies)[int(0.95 * (len(latencies) - 1))] * 1000
                rows.append(
                    Figure(
                        f"{count:,} stored messages: paging key answered, p95",
                        p95,
                        "ms",
                        "< 100 ms",
                        met=p95 < 100,
                    )
                )
            app.keys("End")
            time.sleep(0.5)
            before = len([w for w, _ in _read_log(log) if w == "key"])
            app.keys("F6")
            while not server.started_at:
                time.sleep(0.01)
            seen, sent = app.watch(MARKER, 120.0)
            while not server.finished_at:
                time.sleep(0.05)
            time.sleep(1.0)
            handled = [when for what, when in _read_log(log) if what == "key"][before:]
            latencies = [h - s for s, h in zip(sent, handled, strict=False)]
            if seen is None:  # show what was on screen instead of the answer's end
                print("           (screen when giving up:)")
                print("\n".join("           | " + line for line in app.screen().splitlines()))
            visible = (seen - server.started_at) if seen else None
            ratio = f"{visible / server.send_time:.2f}x" if visible else "n/a"
            shown = f"{visible:.1f} s" if visible else "not seen"
            print(
                f"           20 KB answer at the bottom: send {server.send_time:.1f} s, "
                f"last line visible {shown} ({ratio}); {_latency_text(latencies, len(sent))}"
            )
            print(
                f"           RSS at the end {_rss_mb(app.pid):.0f} MB, CPU {_cpu_seconds(app.pid):.1f} s"
            )
            emit("tui", rows)
        finally:
            app.stop()
            server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    stream = sub.add_parser("stream", help="80 KB answer: bare Markdown vs our transcript")
    stream.add_argument("--cap", type=float, default=200.0, help="give up on an app after this")
    stream.add_argument("--chars", type=int, default=80_000)
    stream.add_argument(
        "--only", choices=("transcript", "bare"), help="measure one app (default: both)"
    )
    session = sub.add_parser("session", help="20,000 stored messages: open, page up, stream")
    session.add_argument("--messages", type=int, default=20_000)
    sub.add_parser("all", help="both")
    app = sub.add_parser("app", help="(internal) the app measured inside tmux")
    app.add_argument("--kind", choices=("bare", "transcript", "session"), required=True)
    app.add_argument("--url", required=True)
    app.add_argument("--log", required=True)
    app.add_argument("--db")
    app.add_argument("--conversation")
    args = parser.parse_args(argv)
    if args.command == "app":
        run_app(args.kind, args.url, args.log, args.db, args.conversation)
        return 0
    if subprocess.run(["tmux", "-V"], capture_output=True).returncode != 0:
        print("tmux is required: install it (apt-get install tmux) and run again", file=sys.stderr)
        return 2
    if args.command in ("stream", "all", None):
        only = getattr(args, "only", None)
        kinds = (only,) if only else ("transcript", "bare")
        stream_figures(getattr(args, "cap", 200.0), getattr(args, "chars", 80_000), kinds)
    if args.command in ("session", "all", None):
        session_figures(getattr(args, "messages", 20_000))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
