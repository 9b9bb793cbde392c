"""What a hostile stream cannot make the SSE parser and the assembler hold, without HTTP."""

from __future__ import annotations

import json

import pytest

from smith_tui.llm import LLMError, SSEParser, StreamAssembler
from smith_tui.llm.sse import MAX_EVENT_BYTES

READ = 64 * 1024
"""One network read, as httpx hands them over."""


def _frame(content: str) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": {"content": content}}]})


def test_long_line_in_many_reads_is_one_event() -> None:
    """A 10 MiB line in 64 KiB reads (with a CRLF split between two reads) comes out whole."""
    line = ("data: " + _frame("x" * (10 * 1024 * 1024))).encode() + b"\r\n\r\n"
    parser = SSEParser()
    cut = len(line) - 3  # "\r" | "\n\r\n"
    events = [e for i in range(0, cut, READ) for e in parser.feed(line[i : min(i + READ, cut)])]
    assert events == []
    events = parser.feed(line[cut:]) + parser.close()
    assert [(name, len(data)) for name, data in events] == [(None, len(line) - 10)]
    assert json.loads(events[0][1])["choices"][0]["delta"]["content"] == "x" * (10 * 1024 * 1024)


def test_line_without_end_is_refused_at_the_limit() -> None:
    """A line that never ends is an error once it passes MAX_EVENT_BYTES, not a buffer
    growing with everything the server sends."""
    parser = SSEParser()
    parser.feed(b'data: {"choices": [{"delta": {"content": "')
    piece = b"x" * READ
    fed = 0
    with pytest.raises(LLMError) as caught:
        while fed <= 2 * MAX_EVENT_BYTES:
            parser.feed(piece)
            fed += READ
    assert caught.value.code == "event_too_large"
    assert f"passed {MAX_EVENT_BYTES:,} bytes" in str(caught.value)
    assert fed <= MAX_EVENT_BYTES


def test_event_of_many_data_lines_is_refused_at_the_limit() -> None:
    """Data lines never closed by a blank line are refused the same way."""
    parser = SSEParser()
    line = b"data: " + b"y" * (1024 * 1024 - 7) + b"\n"
    fed = 0
    with pytest.raises(LLMError) as caught:
        while fed <= 2 * MAX_EVENT_BYTES:
            parser.feed(line)
            fed += len(line)
    assert caught.value.code == "event_too_large"
    assert fed <= MAX_EVENT_BYTES + len(line)


@pytest.mark.parametrize("padding", [" ", "\t", "\n"])
def test_padded_events_keep_raw_within_the_cap(padding: str) -> None:
    """Events with whitespace around their JSON (decoded on the second try) are kept in
    ``raw`` within the same budget as plain ones: 100 frames of 1 MiB keep about 2."""
    frame = padding + _frame("z" * (1024 * 1024))
    asm = StreamAssembler()
    for _ in range(100):
        asm.feed_event(None, frame)
        asm.out.clear()
    response = asm.finish()
    assert len(response.content) > asm.max_chars
    assert asm.dropped["text"] == 100 * 1024 * 1024 - asm.max_chars
    assert len(asm.raw) <= asm.max_chars // len(frame) + 1
    assert sum(len(piece) for piece in asm.raw) <= asm.max_chars + len(frame)
