"""SSE parsing, <think> splitting and assembler edge cases, without HTTP."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from smith_tui.llm import LLMError, SSEParser, StreamAssembler, assemble_events
from smith_tui.llm.think import ThinkSplitter


def parse_all(data: bytes, cuts: list[int]) -> list[tuple[str | None, str]]:
    parser = SSEParser()
    events = []
    last = 0
    for cut in [*cuts, len(data)]:
        events += parser.feed(data[last:cut])
        last = cut
    return events + parser.close()


SAMPLE = (
    ": heartbeat\n\n"
    'data: {"a": "é✓"}\n\n'
    "event: error\ndata: line one\ndata: line two\n\n"
    "id: 7\nretry: 100\ndata: [DONE]\n\n"
).encode()
SAMPLE_EVENTS = [(None, '{"a": "é✓"}'), ("error", "line one\nline two"), (None, "[DONE]")]


def test_sse_parser_every_split_point() -> None:
    for cut in range(len(SAMPLE) + 1):
        assert parse_all(SAMPLE, [cut]) == SAMPLE_EVENTS


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
def test_sse_parser_other_line_endings(newline: bytes) -> None:
    data = SAMPLE.replace(b"\n", newline)
    rng = random.Random(5)
    for _ in range(50):
        cuts = sorted(rng.sample(range(len(data)), 6))
        assert parse_all(data, cuts) == SAMPLE_EVENTS


def test_sse_parser_json_lines_and_missing_final_blank_line() -> None:
    assert parse_all(b'{"x":1}\n{"x":2}', []) == [(None, '{"x":1}'), (None, '{"x":2}')]
    assert parse_all(b'data: {"x":1}', []) == [(None, '{"x":1}')]
    parser = SSEParser()
    parser.feed(b": ping\n")
    assert parser.lines_seen == 1


def split_think(pieces: list[str]) -> tuple[str, str]:
    splitter = ThinkSplitter()
    reasoning, text = [], []
    for piece in pieces:
        r, t = splitter.feed(piece)
        reasoning.append(r)
        text.append(t)
    r, t = splitter.flush()
    return "".join(reasoning) + r, "".join(text) + t


THINK = "<think>\nweigh options\n</think>\n\nThe answer."


def test_think_split_at_every_boundary() -> None:
    for i in range(len(THINK) + 1):
        for j in range(i, len(THINK) + 1):
            assert split_think([THINK[:i], THINK[i:j], THINK[j:]]) == (
                "weigh options\n",
                "The answer.",
            )


def test_think_character_by_character() -> None:
    assert split_think(list(THINK)) == ("weigh options\n", "The answer.")


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["Hello <think>x</think>"], ("", "Hello <think>x</think>")),  # only at the start
        (["<thi", "s is not a tag"], ("", "<this is not a tag")),
        (["<think>never closed"], ("never closed", "")),
        (["<th"], ("", "<th")),
        (["  <think>a</thi", "nk>b"], ("a", "b")),
        (["<think>a <", "/b> c</think>d"], ("a </b> c", "d")),
    ],
)
def test_think_edge_cases(pieces: list[str], expected: tuple[str, str]) -> None:
    assert split_think(pieces) == expected


def chunk(delta: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    body: dict[str, Any] = dict(top)
    if delta is not None:
        body.setdefault("choices", [{"index": 0, "delta": delta}])
    return body


def test_usage_last_wins_and_finish_reason_sticks() -> None:
    resp = assemble_events(
        [
            chunk({"content": "a"}, usage={"prompt_tokens": 1, "completion_tokens": 1}),
            chunk({"content": "b"}, usage=None),
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
            {"choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": None}]},
            {"choices": [], "usage": {"input_tokens": 5, "output_tokens": 6}},
        ]
    )
    assert resp.message.content == "ab"
    assert resp.finish_reason == "length"
    assert resp.usage is not None and (resp.usage.input_tokens, resp.usage.total_tokens) == (5, 11)


def test_reasoning_details_not_double_counted() -> None:
    both = {
        "reasoning": "R",
        "reasoning_details": [{"type": "reasoning.text", "text": "R", "index": 0}],
    }
    only_details = {
        "reasoning_details": [{"type": "reasoning.summary", "summary": "S", "index": 1}]
    }
    resp = assemble_events([chunk(both), chunk(only_details)])
    assert resp.reasoning == "RS"
    assert [d["type"] for d in resp.reasoning_details] == ["reasoning.text", "reasoning.summary"]


def test_done_stops_and_strings_are_decoded() -> None:
    asm = StreamAssembler()
    asm.feed(json.dumps(chunk({"content": "x"})))
    asm.feed_event(None, b"[DONE]")
    assert asm.done
    assert asm.finish().message.content == "x"


@pytest.mark.parametrize(
    ("item", "code"),
    [
        ((None, b"{oops"), "invalid_json"),
        ((None, b"[1, 2]"), "invalid_json"),
        ((None, b'{"choices": ["bad"]}'), "invalid_chunk"),
        ((None, b'{"object": "error", "message": "vllm says no", "code": 400}'), "stream_error"),
        (("error", b'{"error": {"message": "boom"}}'), "stream_error"),
    ],
)
def test_bad_events(item: tuple[str | None, bytes], code: str) -> None:
    with pytest.raises(LLMError) as info:
        assemble_events([item])
    assert info.value.code == code


def test_content_parts_and_refusal() -> None:
    resp = assemble_events(
        [
            chunk({"content": [{"type": "text", "text": "A"}, {"type": "image_url"}]}),
            chunk({"refusal": "no."}),
        ]
    )
    assert resp.message.content == "Ano."
