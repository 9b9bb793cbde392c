"""Run the ACP agent on this process's stdin/stdout.

stdout carries protocol messages only: the protocol gets private copies of the stdin and
stdout descriptors, then descriptor 1 is pointed at stderr and 0 at /dev/null, so a stray
print, a library's output or an inherited descriptor can never corrupt the stream. Logs
go to stderr (``SMITH_ACP_LOG=debug`` for more).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from typing import Any, cast

from acp import Agent, run_agent

from smith_tui.acp import preload
from smith_tui.acp.agent import RuntimeOpener, SmithAgent

STREAM_LIMIT = 50 * 1024 * 1024
"""Largest protocol message read (a prompt with embedded files can be big)."""


def _claim_stdio() -> tuple[Any, Any]:
    """Private binary files for the protocol; fds 0 and 1 no longer reach the client."""
    sys.stdout.flush()
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return proto_in, proto_out


class _FileWriter(asyncio.WriteTransport):
    """Blocking writes for an output that is not a pipe (a file): messages are small."""

    def __init__(self, file: Any) -> None:
        super().__init__()
        self._file = file
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._file.write(data)
        self._file.flush()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True


def _feed(loop: asyncio.AbstractEventLoop, file: Any, reader: asyncio.StreamReader) -> None:
    """Read an input that is not a pipe (a file) in a thread."""
    try:
        while chunk := file.read(65536):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
    finally:
        loop.call_soon_threadsafe(reader.feed_eof)


async def _streams(
    proto_in: Any, proto_out: Any
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STREAM_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proto_in)
    except ValueError:  # a regular file
        threading.Thread(target=_feed, args=(loop, proto_in, reader), daemon=True).start()
    protocol = asyncio.streams.FlowControlMixin()
    transport: asyncio.BaseTransport
    try:
        transport, _ = await loop.connect_write_pipe(lambda: protocol, proto_out)
    except ValueError:  # a regular file
        transport = _FileWriter(proto_out)
    writer = _PreloadingWriter(transport, protocol, None, loop)
    return reader, writer


class _PreloadingWriter(asyncio.StreamWriter):
    """Starts loading the engine (:mod:`smith_tui.acp.preload`) once the first message,
    ``initialize``'s answer, is written: the answer never waits for it."""

    def write(self, data: bytes | bytearray | memoryview) -> None:
        super().write(data)
        preload.start()


async def _serve(open_runtime: RuntimeOpener, version: str, proto_in: Any, proto_out: Any) -> None:
    agent = SmithAgent(open_runtime, version)
    reader, writer = await _streams(proto_in, proto_out)
    try:
        # SmithAgent implements the methods it offers; the SDK answers the rest with
        # method-not-found. session/fork, resume and close are "unstable" in the SDK.
        await run_agent(cast(Agent, agent), writer, reader, use_unstable_protocol=True)
    finally:
        await agent.aclose()


def _editor_gone(record: logging.LogRecord) -> bool:
    """Drop the log record of a write to an editor that closed its pipe (the SDK's send loop
    logs it with a traceback): the session ended, nothing failed."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, BrokenPipeError | ConnectionError)


def serve(open_runtime: RuntimeOpener, version: str) -> int:
    """Serve ACP on stdio until the client closes stdin; returns the exit code."""
    level = os.environ.get("SMITH_ACP_LOG", "warning").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="smith acp: %(levelname)s %(name)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(_editor_gone)
    proto_in, proto_out = _claim_stdio()
    try:
        asyncio.run(_serve(open_runtime, version, proto_in, proto_out))
    except KeyboardInterrupt:
        return 130
    except (BrokenPipeError, ConnectionError):
        return 0  # the editor went away mid-message: the session ended, nothing failed
    return 0
