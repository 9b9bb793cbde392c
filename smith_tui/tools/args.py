"""Argument field types and the result budget shared by the tools.

A tool's ``Args`` model (a :class:`~smith_tui.tools.spec.ToolArgs`) builds its
fields from the types here so the same argument is checked the same way in
every tool: :data:`Text` (a string that is not blank), :data:`Int` and
:data:`Number` (JSON numbers or numeric strings, never ``true``/``false``)
and :data:`Flag` (``true``/``false``, also as a string). What they refuse is
reported in the single style of :meth:`ToolSpec.parse_arguments`.

:func:`check_argument_values` is the check every call passes before its tool sees
it (the executor runs it): no string anywhere in the arguments holds a NUL, and
nothing nests deeper than :data:`~smith_tui.llm.nesting.MAX_JSON_DEPTH`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator
from pydantic_core import PydanticCustomError

from smith_tui.config.service_options import DEFAULT_OUTPUT_CHARS
from smith_tui.llm.nesting import MAX_JSON_DEPTH
from smith_tui.tools.spec import ToolContext, ToolError

DEFAULT_MAX_OUTPUT_CHARS = DEFAULT_OUTPUT_CHARS
"""Character budget of a tool result when its ``max_output_chars`` is absent."""

DEFAULT_CODE_MAX_CHARS = 12_000
"""Character budget of a code tool's result (``code_grep``, ``code_map``…) when absent."""


# ---------------------------------------------------------------------------
# argument types


def _no_bool(value: Any) -> Any:
    # pydantic reads true as 1; a flag where a number belongs is a mistake to report
    # (in the generic "must be <what the schema says>, got True" form).
    if isinstance(value, bool):
        raise PydanticCustomError("bool_for_number", "a boolean where a number belongs")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    return value


def _flag(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ValueError(f"must be true or false, got {value!r:.80}")


Text = Annotated[str, AfterValidator(_not_blank)]
"""A string with something in it besides whitespace (kept as given)."""

Name = Annotated[str, AfterValidator(_not_blank), AfterValidator(_no_nul)]
"""A non-blank string without NUL characters (a pattern, query or symbol name)."""

NotBool = BeforeValidator(_no_bool)
"""Refuses ``true``/``false`` for a number. Put it after any bounds, as in
``Annotated[int, Field(ge=1), NotBool] | None``: bounds given to an optional
field's ``Field`` would not reach the JSON schema as ``minimum``."""

Int = Annotated[int, NotBool]
"""An integer; integral floats and digit strings are accepted, booleans are not."""

Number = Annotated[float, NotBool]
"""A finite number; numeric strings are accepted, booleans are not."""

Flag = Annotated[bool, BeforeValidator(_flag)]
"""``true`` or ``false`` (the strings ``"true"`` / ``"false"`` too)."""


# ---------------------------------------------------------------------------
# settings


def max_output_chars(ctx: ToolContext, name: str, default: int = DEFAULT_MAX_OUTPUT_CHARS) -> int:
    """The character budget of tool ``name``: ``services.tool.<name>.max_output_chars`` of
    the typed config (checked when it was loaded), else ``default``."""
    return ctx.config.services.tool.max_output_chars(name) or default


def bad_arguments(tool: str, message: str) -> ToolError:
    """A domain check on an argument failed: ``"<tool>: <message>"``, code ``invalid_arguments``."""
    return ToolError(f"{tool}: {message}", code="invalid_arguments")


def _where(path: tuple[str | int, ...]) -> str:
    """``edits[2].text`` for the path ``("edits", 2, "text")``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def check_argument_values(arguments: Mapping[str, Any]) -> None:
    """Refuse arguments a tool must never see, naming the argument.

    A NUL character in any string (a value or a key, at any depth) cannot be part of
    a path, a command line or an environment and makes the system calls behind the
    tools fail, so no tool gets one. Nesting deeper than ``MAX_JSON_DEPTH`` is refused
    too (decoded JSON is bounded already; this covers arguments given as objects).
    The walk is iterative, so no input can exhaust the stack.
    """
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), arguments)]
    while stack:
        path, value = stack.pop()
        if len(path) > MAX_JSON_DEPTH:
            raise ToolError(
                f"argument `{_where(path[:3])}` is nested deeper than {MAX_JSON_DEPTH} "
                "levels; send flat arguments matching the tool's schema",
                code="invalid_arguments",
            )
        if isinstance(value, str):
            if "\x00" in value:
                raise ToolError(
                    f"argument `{_where(path)}` contains a NUL character (\\0), which no "
                    "path, command or text given to a tool may hold; send it without the NUL",
                    code="invalid_arguments",
                )
        elif isinstance(value, Mapping):
            items = []
            for key, item in value.items():
                if isinstance(key, str) and "\x00" in key:
                    where = f"a key under `{_where(path)}`" if path else "an argument name"
                    raise ToolError(
                        f"{where} contains a NUL character (\\0); send it without the NUL",
                        code="invalid_arguments",
                    )
                items.append(((*path, str(key)), item))
            stack.extend(reversed(items))  # the first argument is checked first
        elif isinstance(value, list | tuple):
            stack.extend(reversed([((*path, i), item) for i, item in enumerate(value)]))
