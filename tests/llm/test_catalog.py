"""Model catalog over HTTP (OpenRouter, OpenAI, llama.cpp shapes) and discovery."""

from __future__ import annotations

import json
from typing import Any

import pytest

from smith_tui.llm import (
    Discovery,
    LLMClient,
    LLMError,
    fallback_chain,
    first_available,
    parse_models,
    prefer_capability_tag,
    prefer_prefix,
)
from tests.llm.helpers import config
from tests.llm.minihttp import MiniJSONServer
from tests.support.clock import ManualClock
from tests.support.llm_script import STREAMS_DIR

OPENROUTER = json.loads((STREAMS_DIR / "24_openrouter_models_catalog_subset.json").read_text())


async def test_openrouter_catalog_file(llm_server: Any) -> None:
    llm_server.catalog = OPENROUTER
    async with LLMClient(config(llm_server)) as client:
        models = await client.list_models()
    got = {m.id: (m.context_window, m.max_output_tokens) for m in models}
    # top_provider.context_length wins over the nominal context_length (1000000 for sonnet-4)
    assert got == {
        "anthropic/claude-sonnet-4": (200000, 64000),
        "openai/gpt-4.1-mini": (1047576, 32768),
        "openai/gpt-4o": (128000, 16384),
        "openai/gpt-3.5-turbo": (16385, 4096),
    }
    sonnet = models[0]
    assert sonnet.name == "Anthropic: Claude Sonnet 4"
    assert sonnet.pricing["prompt"] == pytest.approx(0.000003)
    assert sonnet.pricing["completion"] == pytest.approx(0.000015)
    assert "overrides" not in sonnet.pricing
    assert sonnet.raw["context_length"] == 1000000
    assert llm_server.requests[0].path == "/v1/models"


async def test_catalog_is_cached_until_refresh_or_ttl(llm_server: Any) -> None:
    clock = ManualClock()
    async with LLMClient(config(llm_server, catalog_ttl=300), clock=clock) as client:
        first = await client.list_models()
        second = await client.list_models()
        assert first is second
        assert len(llm_server.requests) == 1
        await client.list_models(refresh=True)
        assert len(llm_server.requests) == 2
        await clock.advance(299.9)
        await client.list_models()
        assert len(llm_server.requests) == 2  # still fresh just before the TTL
        await clock.advance(0.2)
        await client.list_models()
        assert len(llm_server.requests) == 3
        model = await client.get_model("scripted-model")
        assert model is not None and model.context_window is None
        assert await client.get_model("nope") is None


async def test_catalog_http_error(llm_server: Any) -> None:
    llm_server.catalog_status = 503
    async with LLMClient(config(llm_server)) as client:
        with pytest.raises(LLMError) as info:
            await client.list_models()
    assert (info.value.code, info.value.origin, info.value.retryable) == (
        "http_503",
        "catalog",
        True,
    )


@pytest.mark.parametrize(
    ("args", "ctx"),
    [
        (["llama-server", "--ctx-size", "8192", "-ngl", "99"], 8192),
        (["llama-server", "-m", "x.gguf", "-c", "4096"], 4096),
        (["llama-server", "--ctx-size=16384"], 16384),
        (["llama-server", "--ctx-size", "0"], 131072),  # 0 = model default -> n_ctx_train
    ],
)
async def test_llamacpp_router_args(llm_server: Any, args: list[str], ctx: int) -> None:
    llm_server.catalog = {
        "object": "list",
        "data": [
            {
                "id": "qwen3-8b",
                "object": "model",
                "owned_by": "llamacpp",
                "meta": {"n_ctx_train": 131072, "n_vocab": 151936},
                "status": {"value": "loaded", "args": args},
            },
            {
                "id": "other",
                "object": "model",
                "owned_by": "llamacpp",
                "status": {"value": "unloaded"},
            },
        ],
    }
    async with LLMClient(config(llm_server)) as client:
        models = await client.list_models()
    assert [(m.id, m.context_window) for m in models] == [("qwen3-8b", ctx), ("other", None)]


async def test_llamacpp_props_beats_training_context() -> None:
    models_body = {
        "object": "list",
        "data": [
            {
                "id": "m.gguf",
                "object": "model",
                "owned_by": "llamacpp",
                "meta": {"n_ctx_train": 32768},
            }
        ],
    }
    props = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}
    async with MiniJSONServer({"/v1/models": (200, models_body), "/props": (200, props)}) as srv:
        async with LLMClient({"api_url": srv.url}) as client:
            models = await client.list_models()
        assert srv.hits == ["/v1/models", "/props"]
    assert models[0].context_window == 8192
    # without /props (404) the training context is the fallback
    async with MiniJSONServer({"/v1/models": (200, models_body)}) as srv:
        async with LLMClient({"api_url": srv.url + "/v1/"}) as client:
            models = await client.list_models()
    assert models[0].context_window == 32768


async def test_paginated_catalog() -> None:
    page1 = {"data": [{"id": "a"}], "links": {"next": "/v1/models?page=2"}}
    page2 = {"data": [{"id": "b", "max_model_len": 4096}], "links": {"next": None}}
    routes = {"/v1/models": (200, page1), "/v1/models?page=2": (200, page2)}
    async with MiniJSONServer(routes) as srv, LLMClient({"api_url": srv.url}) as client:
        models = await client.list_models()
    assert [(m.id, m.context_window) for m in models] == [("a", None), ("b", 4096)]


def test_parse_models_shapes() -> None:
    assert (
        parse_models({"models": [{"model": "x", "context_length": 100}]})[0].context_window == 100
    )
    assert [m.id for m in parse_models([{"id": "bare"}, "junk", {"no": "id"}])] == ["bare"]
    assert parse_models({"unexpected": 1}) == []


def test_discovery_strategies() -> None:
    models = parse_models(OPENROUTER)
    assert first_available(models) == Discovery(
        "anthropic/claude-sonnet-4", "first of 4 available model(s)"
    )
    assert first_available([]) is None
    pick = prefer_prefix(models, ["google/", "openai/gpt-4o"])
    assert pick is not None and pick.model_id == "openai/gpt-4o" and "openai/gpt-4o" in pick.reason
    assert prefer_prefix(models, "mistral/") is None
    assert prefer_capability_tag(models, "reasoning").model_id == "anthropic/claude-sonnet-4"
    assert prefer_capability_tag(models, "structured_outputs").model_id == "openai/gpt-4.1-mini"
    assert prefer_capability_tag(models, "image").model_id == "anthropic/claude-sonnet-4"
    assert (
        prefer_capability_tag(["llama-3-8b", "qwen2.5-coder-7b"], "coder").model_id
        == "qwen2.5-coder-7b"
    )
    assert prefer_capability_tag(models, "audio") is None
    chain = fallback_chain(models, ["openai/gpt-5", "openai/gpt-3.5-turbo", "openai/gpt-4o"])
    assert chain is not None and chain.model_id == "openai/gpt-3.5-turbo"
    assert "fallback #1" in chain.reason
    assert chain.to_dict() == {"model_id": "openai/gpt-3.5-turbo", "reason": chain.reason}
    assert fallback_chain(["x"], ["y"]) is None
