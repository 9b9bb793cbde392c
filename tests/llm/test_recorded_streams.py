"""Every recorded provider stream, served over real HTTP to the real client.

Each file is served once byte-exact as recorded and once re-cut at random
byte boundaries (so JSON objects, UTF-8 characters and ``\\n\\n`` separators
get split across reads). The expected results are literals in ``expected.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from smith_tui.llm import ChatResponse, LLMClient, LLMError, SSEParser, StreamAssembler
from tests.llm.expected import EXPECTED, Expect, TextSpec
from tests.llm.helpers import Recorder, config, request
from tests.support.llm_script import STREAMS_DIR, replay_file

STREAM_FILES = sorted(p.name for p in STREAMS_DIR.glob("*") if p.name.endswith((".sse", ".jsonl")))


def test_every_recording_has_an_expectation() -> None:
    assert len(STREAM_FILES) == 24  # 01-23 and 25 (24 is the catalog)
    assert set(STREAM_FILES) == set(EXPECTED)


def _check_text(actual: str, spec: TextSpec, what: str) -> None:
    if isinstance(spec, str):
        assert actual == spec, what
        return
    length, start, end = spec
    assert len(actual) == length, f"{what}: length"
    assert actual.startswith(start), f"{what}: start {actual[:80]!r}"
    assert actual.endswith(end), f"{what}: end {actual[-80:]!r}"


def _check_response(resp: ChatResponse, exp: Expect) -> None:
    _check_text(resp.message.content, exp.text, "text")
    _check_text(resp.reasoning, exp.reasoning, "reasoning")
    got = [(tc.id, tc.name, tc.arguments) for tc in resp.message.tool_calls]
    assert got == exp.tool_calls
    assert resp.finish_reason == exp.finish_reason
    if exp.usage is None:
        assert resp.usage is None
    else:
        assert resp.usage is not None
        assert (
            resp.usage.input_tokens,
            resp.usage.output_tokens,
            resp.usage.total_tokens,
        ) == exp.usage
        for key, value in exp.usage_extra.items():
            assert getattr(resp.usage, key) == pytest.approx(value), key
    if exp.model is not None:
        assert resp.model == exp.model
    if exp.details is not None:
        assert len(resp.reasoning_details) == len(exp.details)
        for got_detail, want in zip(resp.reasoning_details, exp.details, strict=True):
            for key, value in want.items():
                if isinstance(value, tuple):
                    assert len(got_detail[key]) == value[1], key
                else:
                    assert got_detail[key] == value, key
    for tc in resp.message.tool_calls:
        assert tc.call_id == tc.id
        if tc.name:
            assert isinstance(tc.parsed_arguments(), dict)
    assert all(tc.name for tc in resp.valid_tool_calls)


def _check_error(err: LLMError, exp: Expect) -> None:
    want = exp.error
    assert want is not None
    assert err.code == want["code"]
    assert err.kind == want["kind"]
    assert err.retryable is want["retryable"]
    assert want["message_has"] in err.message
    assert err.data["provider_code"] == want["provider_code"]


@pytest.mark.parametrize("name", STREAM_FILES)
def test_assembler_on_file_bytes(name: str) -> None:
    """The pure assembler, fed straight from the file (no HTTP)."""
    exp = EXPECTED[name]
    parser = SSEParser()
    asm = StreamAssembler()
    data = (STREAMS_DIR / name).read_bytes()
    try:
        for event in parser.feed(data) + parser.close():
            asm.feed_event(*event)
            if asm.done:
                break
        resp = asm.finish()
    except LLMError as err:
        _check_error(err, exp)
        return
    assert exp.error is None, "expected an error"
    assert asm.complete, "a recorded answer ends with [DONE] or a finish_reason"
    _check_response(resp, exp)


@pytest.mark.parametrize("mode", ["recorded", "rechunked"])
@pytest.mark.parametrize("name", STREAM_FILES)
async def test_recording_over_http(llm_server: Any, name: str, mode: str) -> None:
    exp = EXPECTED[name]
    if mode == "recorded":
        reply = replay_file(name)
    else:
        reply = replay_file(name, rechunk_seed=sum(name.encode()), min_write=1, max_write=97)
    llm_server.enqueue(reply)
    rec = Recorder()
    async with LLMClient(config(llm_server)) as client:
        try:
            resp = await client.chat_stream(request(), rec.handlers())
        except LLMError as err:
            assert exp.error is not None, f"unexpected error {err!r}"
            _check_error(err, exp)
            assert rec.errors == [err]
            assert rec.done == []
            if exp.streamed_reasoning_len is not None:
                assert len("".join(rec.reasoning)) == exp.streamed_reasoning_len
            return
    assert exp.error is None, "expected an error, got success"
    _check_response(resp, exp)
    # handlers saw exactly what the response holds
    assert "".join(rec.text) == resp.message.content
    assert "".join(rec.reasoning) == resp.reasoning
    assert rec.done == [resp]
    assert rec.errors == []
    if resp.usage is not None:
        assert rec.usage[-1] == resp.usage
    else:
        assert rec.usage == []
    for position, call in enumerate(resp.message.tool_calls):
        pieces = [d.arguments for d in rec.tools if d.index == position]
        assert "".join(pieces) == call.arguments
    body = llm_server.chat_requests()[-1]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
