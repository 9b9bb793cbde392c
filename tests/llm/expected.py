"""What each recorded stream in tests/fixtures/streams must assemble into.

Every value here was read off the recording by hand (and cross-checked with
jq), not produced by the code under test. ``text``/``reasoning`` are either
the whole string or ``(length, start, end)``; lengths count code points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TextSpec = str | tuple[int, str, str]


@dataclass(frozen=True)
class Expect:
    """The assembled result of one recording (or the error it must raise)."""

    text: TextSpec = ""
    reasoning: TextSpec = ""
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: tuple[int, int, int] | None = None
    usage_extra: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    error: dict[str, Any] | None = None
    streamed_reasoning_len: int | None = None
    """For error streams: how much reasoning reached on_reasoning before the error."""
    details: list[dict[str, Any]] | None = None
    """Checks on reasoning_details: per entry, key -> value or ("len", n)."""


EXPECTED: dict[str, Expect] = {
    "01_openai_gpt-4o_parallel_tool_calls.sse": Expect(
        tool_calls=[
            (
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                '{"city": "Edinburgh", "country": "GB", "units": "c"}',
            ),
            (
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                '{"ticker": "AAPL", "exchange": "NASDAQ"}',
            ),
        ],
        finish_reason="tool_calls",
        usage=(149, 60, 209),
        usage_extra={"reasoning_tokens": 0},
        model="gpt-4o-2024-08-06",
    ),
    "02_openai_gpt-4o-mini_tool_call_usage_chunk.sse": Expect(
        tool_calls=[("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", '{"country":"UK"}')],
        finish_reason="tool_calls",
        usage=(53, 15, 68),
        usage_extra={"cached_tokens": 0, "reasoning_tokens": 0},
        model="gpt-4o-mini-2024-07-18",
    ),
    "03_openai_gpt-4o_n3_multiple_choices.sse": Expect(
        # choice 0 only; choices 1 and 2 say 61 and 59 degrees
        text='{"city":"San Francisco","temperature":65,"units":"f"}',
        finish_reason="stop",
        usage=(79, 42, 121),
    ),
    "04_openrouter_claude-sonnet-4.5_reasoning_heartbeats.sse": Expect(
        text="2 + 2 = 4",
        reasoning="This is a simple arithmetic question. 2+2 equals 4.",
        finish_reason="stop",
        usage=(43, 36, 79),
        usage_extra={"reasoning_tokens": 13, "cost": 0.000669, "cached_tokens": 0},
        model="anthropic/claude-sonnet-4.5",
        details=[
            {
                "type": "reasoning.text",
                "text": "This is a simple arithmetic question. 2+2 equals 4.",
                "format": "anthropic-claude-v1",
                "signature": ("len", 304),
            }
        ],
    ),
    "05_openrouter_o3_encrypted_reasoning_heartbeats.sse": Expect(
        text=(
            446,
            "I’m ChatGPT, a large-language-model assistant created by OpenAI.",
            "something specific you’d like help with, just let me know!",
        ),
        reasoning="",
        finish_reason="stop",
        usage=(9, 104, 113),
        usage_extra={"cost": 0.00085},
        model="openai/o3",
        details=[
            {
                "type": "reasoning.encrypted",
                "id": "rs_0aa4f2c435e6d1dc0169082486816c8193a029b5fc4ef1764f",
                "format": "openai-responses-v1",
                "data": ("len", 1164),
            }
        ],
    ),
    "06_openrouter_minimax-m2_error_in_stream.sse": Expect(
        error={
            "code": "stream_error",
            "kind": "provider",
            "retryable": False,
            "message_has": "Token limit reached",
            "provider_code": 400,
        },
        streamed_reasoning_len=len("We need to respond to a greeting. The user"),
    ),
    "07_openrouter_kimi-k2_tool_call_repeated_id_name.sse": Expect(
        tool_calls=[("0", "llm_version", "{}")],
        finish_reason=None,
        usage=(57, 17, 74),
        usage_extra={"cost": 0.00007159},
        model="moonshotai/kimi-k2",
    ),
    "08_openrouter_kimi-k2_tool_call_split_no_id.sse": Expect(
        tool_calls=[("llm_version:0", "llm_version", "{}")],
        finish_reason="tool_calls",
        usage=(56, 12, 68),
        model="moonshotai/kimi-k2",
    ),
    "09_deepseek-reasoner_reasoning_content.sse": Expect(
        text="Hello there! 😊 How can I help you today?",
        reasoning=(
            882,
            'Hmm, the user just said "Hello". It\'s a simple greeting but',
            "they might not reply further - and that's okay too.",
        ),
        finish_reason="stop",
        usage=(6, 212, 218),
        usage_extra={"reasoning_tokens": 198, "cached_tokens": 0},
        model="deepseek-reasoner",
    ),
    "10_deepseek-reasoner_reasoning_then_tool_call.chunks.jsonl": Expect(
        reasoning=(
            191,
            "The user is asking for the weather in San Francisco. I need",
            'with the location parameter set to "San Francisco".',
        ),
        tool_calls=[
            ("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", '{"location": "San Francisco"}')
        ],
        finish_reason="tool_calls",
        usage=(339, 83, 422),
        usage_extra={"reasoning_tokens": 39, "cached_tokens": 320},
    ),
    "11_zai_glm-4.7_reasoning_content.sse": Expect(
        text="4",
        reasoning=(
            2173,
            "\n1.  **Analyze the User's Request:** The user is asking a ve",
            '7.  **Draft the final response:** "4".',
        ),
        finish_reason="stop",
        usage=(13, 564, 577),
        usage_extra={"reasoning_tokens": 561},
        model="glm-4.7",
    ),
    "12_groq_gpt-oss-120b_reasoning_tool_call.sse": Expect(
        reasoning=(
            92,
            'We need to call the function with correct parameter "name".',
            'Provide a name, e.g., "example".',
        ),
        tool_calls=[
            (
                "fc_bfb39741-3748-4def-9886-a93fc9c64a90",
                "get_something_by_name",
                '{"name":"example"}',
            )
        ],
        finish_reason="tool_calls",
        usage=(304, 49, 353),
        usage_extra={"reasoning_tokens": 23},
        model="openai/gpt-oss-120b",
    ),
    "13_groq_gpt-oss-120b_event_error_tool_use_failed.sse": Expect(
        error={
            "code": "stream_error",
            "kind": "provider",
            "retryable": False,
            "message_has": "Tool call validation failed",
            "provider_code": "tool_use_failed",
        },
        streamed_reasoning_len=412,
    ),
    "14_anthropic-openai-compat_claude-haiku-4.5_tool_index_1.sse": Expect(
        text="Reading it.",
        tool_calls=[("toolu_sanitized", "read_file", '{"path": "a.txt"}')],
        finish_reason="tool_calls",
        usage=None,
    ),
    "15_snowflake_claude-sonnet-4-6_reasoning_details.sse": Expect(
        text=(
            "15 × 27 = **405**\n\nHere's the breakdown:\n- 15 × 20 = 300\n"
            "- 15 × 7 = 105\n- 300 + 105 = **405**"
        ),
        reasoning="15 * 27 = 405",
        finish_reason=None,
        usage=(45, 73, 118),
        model="claude-sonnet-4-6",
        details=[{"type": "reasoning.text", "id": "reasoning-text-1", "text": "15 * 27 = 405"}],
    ),
    "16_hf-router-together_deepseek-r1_think_tags_in_content.sse": Expect(
        text=(
            2556,
            "Crossing the street safely requires attention and",
            "Practice these steps every time—it could save your life! 🌟",
        ),
        reasoning=(
            1429,
            'Okay, the user asked "How do I cross the street?"',
            "Safety first, but don't sound like a paranoid robot.\n",
        ),
        finish_reason="stop",
        usage=(10, 955, 965),
        model="deepseek-ai/DeepSeek-R1",
    ),
    "17_alibaba-dashscope_qwen3-max_reasoning_content.chunks.jsonl": Expect(
        text=(816, 'The word **"strawberry"** contains **3** instances of the le', "**Answer: 3**"),
        reasoning=(
            3301,
            "We are asked: \"How many 'r's are in the word 'strawberry'?\"",
            "So final answer: 3.",
        ),
        finish_reason="stop",
        usage=(24, 1355, 1379),
        usage_extra={"reasoning_tokens": 1084},
        model="qwen3-max",
    ),
    "18_alibaba-dashscope_qwen3-max_tool_call_empty_id.chunks.jsonl": Expect(
        tool_calls=[("call_eee11723464a4b9eb8cee71d", "weather", '{"location": "San Francisco"}')],
        finish_reason="tool_calls",
        usage=(295, 22, 317),
        model="qwen3-max",
    ),
    "19_groq_llama-3.3-70b_tool_call_x_groq_usage.chunks.jsonl": Expect(
        tool_calls=[("tk85n1k4m", "weather", "{}")],
        finish_reason="tool_calls",
        usage=(210, 15, 225),
        model="llama-3.3-70b-versatile",
    ),
    "20_llamacpp-b6097_gpt-oss_harmony_in_content.chunks.jsonl": Expect(
        # harmony channel tokens are not parsed: they stay in the text (documented)
        text=(
            '<|channel|>analysis<|message|>User says "test". Likely wants a test response. '
            "We'll respond acknowledging.<|start|>assistant<|channel|>final<|message|>Got it! "
            "If you have any questions or need assistance, just let me know."
        ),
        finish_reason="stop",
        usage=(82, 43, 125),
        model="gpt-3.5-turbo",
    ),
    "21_llamacpp-b6676_tool_call_tail_timings_verbose.sse": Expect(
        # id and name never arrive: id is minted, the name stays empty (not invented)
        tool_calls=[("call_0", "", '.nvim"}')],
        finish_reason="tool_calls",
        usage=None,
        model=None,
    ),
    "22_vllm_qwen_tool_call_reconstructed.sse": Expect(
        tool_calls=[
            (
                "chatcmpl-tool-ca99dda515524c6abe47d1ea22813507",
                "run_command",
                '{"command": "ls"}',
            )
        ],
        finish_reason="tool_calls",
        usage=None,
        model=None,
    ),
    "23_ollama_qwen2.5-coder_parallel_tool_calls_reconstructed.sse": Expect(
        tool_calls=[
            ("call_wteop8bt", "run_command", '{"command":"ls"}'),
            ("call_rk2xye1l", "run_command", '{"command":"ls -l"}'),
        ],
        finish_reason="tool_calls",
        usage=None,
        model="qwen2.5-coder:7b-instruct-q8_0",
    ),
    "25_ik-llama.cpp_deepseek-v3.1_usage_every_chunk.sse": Expect(
        text="Hello! How can I help you today?",
        finish_reason="stop",
        usage=(12, 10, 22),
        model="DeepSeek-V3.1:Q2_K_XL",
    ),
}
