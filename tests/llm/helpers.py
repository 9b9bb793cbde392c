"""Small shared helpers for the LLM tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smith_tui.llm import ChatRequest, LLMConfig

USER = [{"role": "user", "content": "hi"}]


def config(server: Any, **overrides: Any) -> LLMConfig:
    """Client config pointing at a scripted server."""
    return LLMConfig(api_url=server.base_url, **overrides)


def request(**overrides: Any) -> ChatRequest:
    """A minimal valid request."""
    return ChatRequest(
        model=overrides.pop("model", "m"), messages=overrides.pop("messages", USER), **overrides
    )


@dataclass
class Recorder:
    """Stream handlers that remember every call."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tools: list[Any] = field(default_factory=list)
    usage: list[Any] = field(default_factory=list)
    errors: list[Any] = field(default_factory=list)
    done: list[Any] = field(default_factory=list)

    def handlers(self) -> dict[str, Any]:
        """Plain-callable handlers."""
        return {
            "on_text": self.text.append,
            "on_reasoning": self.reasoning.append,
            "on_tool_delta": self.tools.append,
            "on_usage": self.usage.append,
            "on_error": self.errors.append,
            "on_done": self.done.append,
        }

    def async_handlers(self) -> dict[str, Any]:
        """The same handlers as coroutine functions."""

        def wrap(target: list[Any]) -> Any:
            async def handler(value: Any) -> None:
                target.append(value)

            return handler

        return {
            "on_text": wrap(self.text),
            "on_reasoning": wrap(self.reasoning),
            "on_tool_delta": wrap(self.tools),
            "on_usage": wrap(self.usage),
            "on_error": wrap(self.errors),
            "on_done": wrap(self.done),
        }
