"""A scripted Chat-Completions server on 127.0.0.1 for tests and manual runs.

It speaks HTTP/1.1 on raw asyncio streams, so every byte, write boundary, pause and disconnect
is under the test's control. It runs its own event loop in a daemon thread and therefore serves
sync tests, async tests on any loop, and subprocesses alike::

    with ScriptedLLMServer() as server:
        server.enqueue(text_reply("Hello"), replay_file("01"), http_error(429, retry_after=1))
        ...  # point the client at server.base_url

Each chat request consumes the next queued :class:`~tests.support.llm_script.Reply` (FIFO);
an empty queue answers with ``default_reply`` so a stray request never hangs. Every response
ends with ``Connection: close``; streams use chunked transfer encoding by default.

Run standalone: ``python -m tests.support.llm_server --port 0 --script replies.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import http
import json
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support.llm_script import (
    DONE,
    KEEP_ALIVE,
    STREAMS_DIR,
    Reply,
    ToolCall,
    Usage,
    disconnect_after,
    error_body,
    event_error,
    first_end_frame,
    http_error,
    in_stream_error,
    malformed_json_event,
    raw_sse,
    replay_file,
    reply_from_spec,
    sse_event,
    stall,
    stream_file,
    text_reply,
    tool_call,
    truncate_after,
)

__all__ = [
    "DONE",
    "KEEP_ALIVE",
    "STREAMS_DIR",
    "RecordedRequest",
    "Reply",
    "ScriptedLLMServer",
    "ToolCall",
    "Usage",
    "disconnect_after",
    "error_body",
    "event_error",
    "first_end_frame",
    "http_error",
    "in_stream_error",
    "malformed_json_event",
    "raw_sse",
    "replay_file",
    "reply_from_spec",
    "serve_forever",
    "sse_event",
    "stall",
    "stream_file",
    "text_reply",
    "tool_call",
    "truncate_after",
]

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
MODELS_PATHS = frozenset({"/v1/models", "/models"})
DEFAULT_CATALOG: dict[str, Any] = {
    "object": "list",
    "data": [{"id": "scripted-model", "object": "model", "owned_by": "tests"}],
}
_MAX_HEAD = 1 << 20


@dataclass
class RecordedRequest:
    """One request as the server received it (recorded before the reply is sent)."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case; repeated headers joined with ", "."""
    body: bytes
    json: Any | None
    """The parsed body, or None when it is empty or not JSON."""
    query: str = ""
    received_at: float = field(default_factory=time.monotonic)
    reply_label: str | None = None
    """Which scripted reply answered it (chat requests only)."""


class _BadRequest(Exception):
    pass


class ScriptedLLMServer:
    """A loopback Chat-Completions server that answers from a queue of scripted replies."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        default_reply: Reply | str = "ok",
        catalog: Any = None,
        catalog_status: int = 200,
        api_key: str | None = None,
        cycle: bool = False,
    ) -> None:
        self.host = host
        self._requested_port = port
        self.default_reply: Reply | str = default_reply
        """Served when the queue is empty; a string means ``text_reply(string)``."""
        self.catalog: Any = DEFAULT_CATALOG if catalog is None else catalog
        """JSON body of GET /models."""
        self.catalog_status = catalog_status
        """HTTP status of GET /models; >= 400 serves an OpenAI-shaped error instead."""
        self.api_key = api_key
        """When set, requests without ``Authorization: Bearer <api_key>`` get a 401."""
        self.cycle = cycle
        """When True, each consumed reply goes back to the end of the queue."""
        self.requests: list[RecordedRequest] = []
        self._queue: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()
        self._recorded = threading.Condition(self._lock)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._port: int | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> ScriptedLLMServer:
        """Bind and start serving in a background thread; returns self."""
        if self._thread is not None:
            raise RuntimeError("ScriptedLLMServer is already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._run, args=(ready, failure), name="scripted-llm-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("scripted LLM server did not start within 10 s")
        if failure:
            self._thread.join(5)
            self._thread = None
            raise failure[0]
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Close every connection (stalled ones too), stop the loop and join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
            with contextlib.suppress(Exception):
                future.result(timeout)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        self._thread = None
        self._loop = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound TCP port."""
        if self._port is None:
            raise RuntimeError("ScriptedLLMServer is not started; call start() first")
        return self._port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """``url + "/v1"``, what an OpenAI-style client takes as its API base."""
        return self.url + "/v1"

    # ------------------------------------------------------------------- script

    def enqueue(self, *replies: Reply | str) -> None:
        """Queue replies (FIFO), one per chat request; a string means ``text_reply(string)``."""
        built = [text_reply(r) if isinstance(r, str) else r for r in replies]
        for reply in built:
            if not isinstance(reply, Reply):
                raise TypeError(f"enqueue takes Reply objects or strings, got {reply!r}")
        with self._lock:
            self._queue.extend(built)

    @property
    def pending(self) -> int:
        """How many queued replies have not been served yet."""
        with self._lock:
            return len(self._queue)

    def clear(self) -> None:
        """Drop queued replies and recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def chat_requests(self) -> list[Any]:
        """The JSON bodies of the chat-completion POSTs received so far, in order."""
        with self._lock:
            return [
                r.json for r in self.requests if r.method == "POST" and _route(r.path) in CHAT_PATHS
            ]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least ``count`` requests are recorded (TimeoutError otherwise)."""
        with self._recorded:
            if not self._recorded.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(
                    f"expected {count} requests within {timeout} s, got {len(self.requests)}"
                )
            return list(self.requests)

    def _chat_count(self) -> int:
        return sum(
            1 for r in self.requests if r.method == "POST" and r.path.endswith("/completions")
        )

    def wait_for_chats(self, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Block until ``count`` chat requests arrived (``GET /models`` does not count)."""
        with self._recorded:
            if not self._recorded.wait_for(lambda: self._chat_count() >= count, timeout):
                raise TimeoutError(
                    f"expected {count} chat requests within {timeout} s, got {self._chat_count()}"
                )
        return self.chat_requests()

    async def wait_for_chats_async(
        self,
        count: int,
        timeout: float = 5.0,  # noqa: ASYNC109 - same signature as wait_for_chats
    ) -> list[dict[str, Any]]:
        """Like :meth:`wait_for_chats` without blocking the caller's event loop."""
        deadline = time.monotonic() + timeout
        while self._chat_count() < count:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"expected {count} chat requests within {timeout} s, got {self._chat_count()}"
                )
            await asyncio.sleep(0.01)
        return self.chat_requests()

    async def wait_for_requests_async(
        self,
        count: int,
        timeout: float = 5.0,  # noqa: ASYNC109 - same signature as wait_for_requests
    ) -> list[RecordedRequest]:
        """Like :meth:`wait_for_requests` without blocking the caller's event loop."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"expected {count} requests within {timeout} s, got {len(self.requests)}"
                )
            await asyncio.sleep(0.01)
        return list(self.requests)

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._queue:
                reply = self._queue.popleft()
                if self.cycle:
                    self._queue.append(reply)
                return reply
        default = self.default_reply
        return text_reply(default) if isinstance(default, str) else default

    def _record(self, request: RecordedRequest) -> None:
        with self._recorded:
            self.requests.append(request)
            self._recorded.notify_all()

    # --------------------------------------------------------------- event loop

    def _run(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._handle, self.host, self._requested_port, limit=_MAX_HEAD)
            )
        except BaseException as exc:
            failure.append(exc)
            ready.set()
            loop.close()
            return
        self._port = self._server.sockets[0].getsockname()[1]
        self._loop = loop
        ready.set()
        try:
            loop.run_forever()
        finally:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.wait(pending, timeout=2))
            loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2)

    # ----------------------------------------------------------------- per request

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            try:
                request = await _read_request(reader, writer)
            except _BadRequest as exc:
                await self._send_json(writer, 400, error_body(400, str(exc)))
                return
            if request is None:
                return
            await self._dispatch(request, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.transport.abort()
        except asyncio.CancelledError:
            writer.transport.abort()
            raise
        finally:
            if not writer.transport.is_closing():
                writer.close()
            self._writers.discard(writer)
            self._tasks.discard(task)

    async def _dispatch(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> None:
        route = _route(request.path)
        if route in CHAT_PATHS:
            allowed = "POST"
        elif route in MODELS_PATHS:
            allowed = "GET"
        else:
            self._record(request)
            await self._send_json(
                writer, 404, error_body(404, f"no route for {request.method} {request.path}")
            )
            return
        if request.method != allowed:
            self._record(request)
            await self._send_json(writer, 405, error_body(405, f"{route} accepts {allowed} only"))
            return
        if (
            self.api_key is not None
            and request.headers.get("authorization") != f"Bearer {self.api_key}"
        ):
            self._record(request)
            await self._send_json(writer, 401, error_body(401, "Incorrect API key provided"))
            return
        if route in MODELS_PATHS:
            self._record(request)
            if self.catalog_status >= 400:
                await self._send_json(writer, self.catalog_status, error_body(self.catalog_status))
            else:
                await self._send_json(writer, self.catalog_status, self.catalog)
            return
        if not isinstance(request.json, dict):
            self._record(request)
            await self._send_json(
                writer, 400, error_body(400, "request body must be a JSON object")
            )
            return
        reply = self._next_reply()
        request.reply_label = reply.label
        self._record(request)
        await self._serve(reply, request.json.get("stream") is True, writer)

    async def _send_json(self, writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        writer.write(
            _head(status, "application/json", {"Content-Length": str(len(body))}, {}) + body
        )
        await writer.drain()

    async def _serve(self, reply: Reply, wants_stream: bool, writer: asyncio.StreamWriter) -> None:
        if reply.delay_s > 0:
            await asyncio.sleep(reply.delay_s)
        if reply.body is not None:
            await self._serve_fixed(reply, reply.body, reply.content_type, writer)
        elif not wants_stream and reply.completion is not None:
            body = json.dumps(reply.completion, ensure_ascii=False).encode()
            await self._serve_fixed(reply, body, "application/json", writer)
        else:
            await self._serve_stream(reply, writer)

    async def _serve_fixed(
        self, reply: Reply, body: bytes, content_type: str, writer: asyncio.StreamWriter
    ) -> None:
        if reply.ending == "stall" and not reply.send_headers:
            await asyncio.sleep(reply.hold_s)
            writer.transport.abort()
            return
        writer.write(
            _head(reply.status, content_type, {"Content-Length": str(len(body))}, reply.headers)
        )
        if reply.ending == "close":
            writer.write(body)
            await writer.drain()
            return
        if reply.ending == "stall":
            await writer.drain()
            await asyncio.sleep(reply.hold_s)
        else:
            writer.write(body[: len(body) // 2])
            await writer.drain()
        _cut(writer, reset=reply.ending == "reset")

    async def _serve_stream(self, reply: Reply, writer: asyncio.StreamWriter) -> None:
        if reply.ending == "stall" and not reply.send_headers:
            await asyncio.sleep(reply.hold_s)
            writer.transport.abort()
            return
        chunked = reply.transfer == "chunked"
        framing = {"Cache-Control": "no-cache"}
        if chunked:
            framing["Transfer-Encoding"] = "chunked"
        writer.write(_head(reply.status, reply.content_type, framing, reply.headers))
        await writer.drain()
        rechunking = reply.rechunk_seed is not None
        for index, piece in enumerate(reply.writes()):
            if not rechunking:
                pause = reply.pauses.get(index, 0.0) + (reply.event_delay_s if index else 0.0)
                if pause > 0:
                    await asyncio.sleep(pause)
            if not piece:
                continue
            writer.write(b"%x\r\n%b\r\n" % (len(piece), piece) if chunked else piece)
            await writer.drain()
            if rechunking:
                await asyncio.sleep(reply.write_pause_s)
        if reply.ending == "close":
            if chunked:
                writer.write(b"0\r\n\r\n")
            await writer.drain()
            return
        if reply.ending == "stall":
            await asyncio.sleep(reply.hold_s)
        _cut(writer, reset=reply.ending == "reset")


def _route(path: str) -> str:
    route = path.partition("?")[0].rstrip("/")
    return route or "/"


def _cut(writer: asyncio.StreamWriter, *, reset: bool) -> None:
    """Drop the connection mid-response: FIN without finishing the body, or RST."""
    if reset:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _head(status: int, content_type: str, framing: dict[str, str], extra: dict[str, str]) -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Scripted"
    headers = {"Content-Type": content_type, **framing, "Connection": "close"}
    lowered = {k.lower() for k in extra}
    lines = [f"HTTP/1.1 {status} {phrase}"]
    lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in lowered]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None  # connection opened and closed without a request
        raise _BadRequest("incomplete request head") from exc
    except asyncio.LimitOverrunError as exc:
        raise _BadRequest("request head too large") from exc
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise _BadRequest(f"malformed request line {lines[0]!r}")
    method, target, _version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise _BadRequest(f"malformed header line {line!r}")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError as exc:
            raise _BadRequest("Content-Length is not a number") from exc
        body = await reader.readexactly(length) if length > 0 else b""
    parsed: Any = None
    if body:
        with contextlib.suppress(ValueError):
            parsed = json.loads(body)
    path, _, query = target.partition("?")
    return RecordedRequest(
        method=method, path=path, headers=headers, body=body, json=parsed, query=query
    )


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";")[0].strip(), 16)
        except ValueError as exc:
            raise _BadRequest("malformed chunk size in request body") from exc
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def serve_forever(
    replies: Iterable[Reply | str] = (),
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    default_reply: Reply | str = "ok",
    catalog: Any = None,
    cycle: bool = False,
    on_ready: Callable[[ScriptedLLMServer], None] | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM (manual runs and benchmarks against a real ``smith``)."""
    stop = threading.Event()
    server = ScriptedLLMServer(
        host=host, port=port, default_reply=default_reply, catalog=catalog, cycle=cycle
    )
    server.enqueue(*replies)
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        with server:
            if on_ready is not None:
                on_ready(server)
            while not stop.wait(0.2):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _load_json_file(path: str, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemExit(f"cannot read {what} {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise SystemExit(f"{what} {path} is not valid JSON: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m tests.support.llm_server [--port N] [--script FILE] ...``."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.llm_server",
        description="Scripted Chat-Completions server for manual tests and benchmarks.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--script",
        help='JSON list of replies: "text", {"text": ...}, {"replay": "01"}, {"error": 429}, {"raw": [...]}',
    )
    parser.add_argument(
        "--default-reply", default="ok", help="text served when the script is used up"
    )
    parser.add_argument("--catalog", help="JSON file served for GET /models")
    parser.add_argument("--cycle", action="store_true", help="replay the script in a loop")
    args = parser.parse_args(argv)
    replies: list[Reply] = []
    if args.script:
        specs = _load_json_file(args.script, "script")
        if not isinstance(specs, list):
            raise SystemExit(f"script {args.script} must hold a JSON list of replies")
        try:
            replies = [reply_from_spec(spec) for spec in specs]
        except (ValueError, TypeError, FileNotFoundError) as exc:
            raise SystemExit(f"script {args.script}: {exc}") from None
    catalog = _load_json_file(args.catalog, "catalog") if args.catalog else None

    def announce(server: ScriptedLLMServer) -> None:
        print(f"scripted LLM server listening on {server.base_url}", flush=True)

    try:
        serve_forever(
            replies,
            host=args.host,
            port=args.port,
            default_reply=args.default_reply,
            catalog=catalog,
            cycle=args.cycle,
            on_ready=announce,
        )
    except OSError as exc:
        raise SystemExit(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
