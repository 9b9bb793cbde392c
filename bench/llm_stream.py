"""Throughput of the streaming client against a bare httpx-sse loop.

A minimal HTTP server on 127.0.0.1 (a thread writing pre-built bytes) serves a
stream of N chat-completion chunks. The same bytes are consumed by
``LLMClient.chat_stream`` (SSE parsing, JSON decoding, assembly, an ``on_text``
handler) and by a bare ``httpx_sse.aconnect_sse`` loop that only JSON-decodes
each event. Each side runs several rounds, alternating; the best time counts.

    .venv/bin/python bench/llm_stream.py [--events 50000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import threading
import time
from pathlib import Path

import httpx
from figures import Figure, emit
from httpx_sse import aconnect_sse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from smith_tui.llm import ChatRequest, LLMClient, LLMConfig

WORDS = ["The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog. "]


def build_stream(events: int) -> bytes:
    """``events`` content chunks, a finish chunk, a usage chunk and ``[DONE]``."""
    head = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":"bench",'
    parts = []
    for i in range(events):
        delta = json.dumps({"content": WORDS[i % len(WORDS)]})
        parts.append(
            f'data: {head}"choices":[{{"index":0,"delta":{delta},"finish_reason":null}}]}}\n\n'
        )
    parts.append(f'data: {head}"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}\n\n')
    parts.append(
        f'data: {head}"choices":[],"usage":{{"prompt_tokens":10,"completion_tokens":{events},'
        f'"total_tokens":{events + 10}}}}}\n\n'
    )
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


class BytesServer:
    """Answers every HTTP request on loopback with the same SSE body."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            while len(rest) < length:
                rest += conn.recv(65536)
            conn.sendall(self.head)
            view = memoryview(self.body)
            for pos in range(0, len(view), 65536):
                conn.sendall(view[pos : pos + 65536])

    def close(self) -> None:
        self.sock.close()


async def run_ours(url: str, events: int) -> float:
    count = 0

    def on_text(_: str) -> None:
        nonlocal count
        count += 1

    request = ChatRequest(model="bench", messages=[{"role": "user", "content": "go"}])
    started = time.perf_counter()
    async with LLMClient(LLMConfig(api_url=url)) as client:
        resp = await client.chat_stream(request, {"on_text": on_text})
    elapsed = time.perf_counter() - started
    assert count == events, count
    assert resp.usage is not None and resp.usage.output_tokens == events
    return elapsed


async def run_bare(url: str, events: int) -> float:
    body = {"model": "bench", "messages": [{"role": "user", "content": "go"}], "stream": True}
    seen = 0
    started = time.perf_counter()  # both sides pay for creating their httpx client
    async with httpx.AsyncClient() as client:
        async with aconnect_sse(client, "POST", url + "/v1/chat/completions", json=body) as source:
            async for event in source.aiter_sse():
                if event.data == "[DONE]":
                    break
                json.loads(event.data)
                seen += 1
    elapsed = time.perf_counter() - started
    assert seen == events + 2, seen
    return elapsed


async def main_async(events: int, rounds: int) -> None:
    body = build_stream(events)
    server = BytesServer(body)
    url = f"http://127.0.0.1:{server.port}"
    ours: list[float] = []
    bare: list[float] = []
    try:
        await run_ours(url, events)  # warm-up (imports, first connection)
        for i in range(rounds):
            if i % 2:
                bare.append(await run_bare(url, events))
                ours.append(await run_ours(url, events))
            else:
                ours.append(await run_ours(url, events))
                bare.append(await run_bare(url, events))
    finally:
        server.close()
    best_ours, best_bare = min(ours), min(bare)
    print(f"stream: {events} events, {len(body) / 1e6:.1f} MB on loopback, best of {rounds}")
    print(f"bare httpx-sse + json.loads : {best_bare * 1000:8.1f} ms")
    print(f"LLMClient.chat_stream       : {best_ours * 1000:8.1f} ms")
    print(f"ratio ours / bare           : {best_ours / best_bare:8.2f}x  (target <= 1.30x)")
    emit(
        "llm_stream",
        [
            Figure(
                f"`chat_stream` of {events:,} events ({len(body) / 1e6:.1f} MB), best of {rounds}",
                best_ours * 1000,
                "ms",
                "≤ 1.3x",
                best_bare * 1000,
                "bare httpx-sse + json.loads",
                met=best_ours / best_bare <= 1.3,
            )
        ],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main_async(args.events, args.rounds))


if __name__ == "__main__":
    main()
