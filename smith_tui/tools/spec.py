"""The shape of a tool: its spec, its arguments, the context a handler runs in, its result.

A tool declares its arguments as a :class:`ToolArgs` pydantic model. The JSON
schema the model sees (``ToolSpec.input_schema``) is derived from it by
:func:`compact_schema`, and :meth:`ToolSpec.parse_arguments` (called once per
call by the executor) validates the decoded arguments against it, turning
every problem into one :class:`ToolError` with code ``invalid_arguments``
that names the argument, says what was wrong and what is expected.

A tool that brings its own JSON schema (an MCP server's tool) sets
``ToolSpec.raw_schema`` and uses :class:`RawArgs`: the schema is offered to the
model as given, and :func:`check_raw_arguments` checks the top level of the
arguments against it (required, unknown, types, enums) in the same error style;
the tool's own server checks the rest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from smith_tui.cancel import CancelToken
from smith_tui.config.schema import SmithConfig
from smith_tui.errors import SmithError
from smith_tui.store import Store
from smith_tui.tools.command_runner import CommandRunner
from smith_tui.tools.ports import FileBackend, SkillSource

MutationState = Literal["none", "attempted", "unknown"]


class ToolError(SmithError):
    """A clean failure the model should see as the tool result (no traceback)."""

    def __init__(self, message: str, *, code: str = "tool_error", data: Any = None) -> None:
        super().__init__(message, code=code)
        self.data = data


class PermissionCheck(Protocol):
    """The permission gate a call passes before its tool runs (the engine's
    ``PermissionGate``)."""

    @property
    def mode(self) -> str:
        """The permission mode (``plan`` and ``read-only`` keep the project read-only)."""
        ...

    async def check(self, name: str, args: Any, ctx: ToolContext) -> str | None:
        """``None`` when the call may run, else the refusal the model reads."""
        ...


class Checkpoint(Protocol):
    """Records the project's files once per turn before a tool changes them (never raises)."""

    async def __call__(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class ToolServices:
    """The handles a tool may use, typed; each is ``None`` where there is none.

    Built once per top-level turn (the engine's ``TurnServices`` adds its own parts)
    and shared by the turns it dispatches; a tool run outside a turn gets none.
    """

    store: Store | None = None
    """The conversation store (notes, scratchpad, todo)."""
    permissions: PermissionCheck | None = None
    """The top-level turn's permission gate (``None``: no permission checks)."""
    checkpoint: Checkpoint | None = None
    """Awaited before a tool that ``changes_files`` runs."""
    files: FileBackend | None = None
    """The front end's file backend for read/edit/write (an editor's buffers), or the disk."""
    commands: CommandRunner | None = None
    """The front end's runner of bash commands (an editor's terminals), or a local one."""
    skills: SkillSource | None = None
    """The user's skills the ``skill`` tool loads."""


NO_SERVICES = ToolServices()
"""The services of a tool run outside a turn: none."""


@dataclass
class ToolContext:
    """What a tool handler may use while it runs: the call, its turn and typed services."""

    role: str
    turn_id: str
    cwd: Path
    cancel: CancelToken
    config: SmithConfig = field(default_factory=SmithConfig)
    """The turn's configuration, validated once when it was loaded: a tool reads typed
    settings (``config.services.tool.bash.default_timeout_s``), never walks a table."""
    conversation_id: str | None = None
    project_id: str | None = None
    project_root: Path | None = None
    services: ToolServices = NO_SERVICES
    on_output: Callable[[str], None] | None = None
    call_id: str | None = None
    """The id of the model's tool call this context runs."""
    job_id: str | None = None
    """The dispatch job of the turn (``None``: the top-level turn)."""
    hook_permission: str | None = None
    """A PreToolUse hook's answer for this call (``allow`` / ``ask``), read by the gate."""
    turn: object | None = None
    """The engine's ``Turn`` this call belongs to: opaque here, read by the dispatch tool
    (which starts a child turn from it)."""

    def is_cancelled(self) -> bool:
        """Return ``True`` once the turn (or this call) was cancelled."""
        return self.cancel.is_cancelled()


@dataclass
class ToolOutput:
    """What a handler returns: content for the model plus structured metadata."""

    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    mutation_state: MutationState = "none"
    ok: bool = True
    error: str | None = None


class ToolArgs(BaseModel):
    """Base of every tool's ``Args`` model.

    Unknown arguments are refused (a subclass that must keep them sets its own
    ``extra``), numbers must be finite, and a JSON ``null`` counts as leaving the
    argument out, so a required one is reported missing and an optional one
    takes its default.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            return {key: value for key, value in data.items() if value is not None}
        return data


class RawArgs(ToolArgs):
    """The arguments of a tool with a ``raw_schema``: kept as given (``model_dump()``)."""

    model_config = ConfigDict(extra="allow", frozen=True)


A = TypeVar("A", bound=ToolArgs)

_SHOWN_ERRORS = 5
"""At most this many argument problems are listed in one error."""


# ---------------------------------------------------------------------------
# the JSON schema the model sees


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    """Resolve ``$ref`` to ``$defs``, drop titles and the ``null`` branch of optional fields."""
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        extra = {k: _inline(v, defs) for k, v in node.items() if k != "$ref"}
        return {**target, **extra}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs") or (key == "default" and value is None):
            continue
        if key == "additionalProperties" and value is True:
            continue  # the default; only a refusal is worth saying
        if key == "properties":
            out[key] = {name: _inline(prop, defs) for name, prop in value.items()}
        else:
            out[key] = _inline(value, defs)
    branches = out.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        rest = [b for b in branches if b != {"type": "null"}]
        if len(rest) == 1:  # null means "left out" (ToolArgs), so do not offer it
            del out["anyOf"]
            out = {**rest[0], **out}
    return out


def compact_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The Chat-Completions ``parameters`` object for ``model``.

    Self-contained (``$defs`` inlined), without pydantic's ``title`` noise and
    without ``null`` branches; enums, bounds, descriptions and
    ``additionalProperties`` are kept.
    """
    raw = model.model_json_schema()
    schema: dict[str, Any] = _inline(raw, raw.get("$defs", {}))
    schema.pop("description", None)  # the model's docstring; the tool has its own description
    schema.setdefault("properties", {})
    return schema


# ---------------------------------------------------------------------------
# the one error style for bad arguments


def _subschema(schema: Mapping[str, Any], loc: tuple[Any, ...]) -> Mapping[str, Any]:
    node: Mapping[str, Any] = schema
    for part in loc:
        if isinstance(part, int) and isinstance(node.get("items"), Mapping):
            node = node["items"]
        elif isinstance(part, str) and part in node.get("properties", {}):
            node = node["properties"][part]
        else:
            return {}
    return node


def _bounds(node: Mapping[str, Any]) -> str:
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        return f" between {low:g} and {high:g}"
    if node.get("exclusiveMinimum") is not None:
        return f" > {node['exclusiveMinimum']:g}"
    if low is not None:
        return f" >= {low:g}"
    if high is not None:
        return f" <= {high:g}"
    return ""


def expected(node: Mapping[str, Any]) -> str:
    """Say in words what a JSON-schema node accepts (``"an integer >= 1"``)."""
    if "enum" in node:
        return "one of " + ", ".join(str(v) for v in node["enum"])
    kind = node.get("type")
    if kind == "string":
        if node.get("maxLength") is not None:
            return f"a string of at most {node['maxLength']} characters"
        return "a string"
    if kind == "integer":
        return "an integer" + _bounds(node)
    if kind == "number":
        return "a number" + _bounds(node)
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        items = node.get("items", {})
        what = {"string": "strings", "object": "objects"}.get(items.get("type"), "values")
        most = f"at most {node['maxItems']} " if node.get("maxItems") is not None else ""
        return f"an array of {most}{what}"
    if kind == "object":
        required = node.get("required") or []
        return "an object" + (f" with {', '.join(required)}" if required else "")
    return "a valid value"


def _where(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _problem(error: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    loc = tuple(error["loc"])
    where = _where(loc)
    kind = error["type"]
    if kind == "missing":
        return f"missing required argument `{where}` ({expected(_subschema(schema, loc))})"
    if kind == "extra_forbidden":
        accepted = ", ".join(_subschema(schema, loc[:-1]).get("properties", {})) or "none"
        return f"unknown argument `{where}` (accepted: {accepted})"
    if kind == "too_long" and "actual_length" in error.get("ctx", {}):
        limit = error["ctx"]["max_length"]
        return f"`{where}` has {error['ctx']['actual_length']} entries; the limit is {limit}"
    if kind in ("value_error", "assertion_error"):
        message = str(error["ctx"]["error"]) if "ctx" in error else error["msg"]
        return f"`{where}` {message}" if where else message
    shown = f"{error['input']!r:.80}"
    if not loc:
        return f"arguments must be a JSON object, got {shown}"
    return f"`{where}` must be {expected(_subschema(schema, loc))}, got {shown}"


def invalid_arguments(tool: str, exc: ValidationError, schema: Mapping[str, Any]) -> ToolError:
    """One :class:`ToolError` listing what is wrong with a call's arguments."""
    errors = exc.errors(include_url=False)
    problems = [_problem(error, schema) for error in errors[:_SHOWN_ERRORS]]
    if len(errors) > _SHOWN_ERRORS:
        problems.append(f"and {len(errors) - _SHOWN_ERRORS} more")
    return ToolError(f"{tool}: " + "; ".join(problems) + ".", code="invalid_arguments")


_JSON_TYPES: Mapping[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def _has_type(value: Any, kind: str) -> bool:
    if kind not in _JSON_TYPES:
        return True  # a type we do not know: the tool's server decides
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[kind])


def _raw_problem(name: str, value: Any, node: Mapping[str, Any]) -> str | None:
    kinds = node.get("type")
    if isinstance(kinds, str):
        kinds = [kinds]
    if isinstance(kinds, list) and kinds and not any(_has_type(value, k) for k in kinds):
        wanted = " or ".join(expected({**node, "type": k}) for k in kinds)
        return f"`{name}` must be {wanted}, got {value!r:.80}"
    if isinstance(node.get("enum"), list) and value not in node["enum"]:
        return f"`{name}` must be {expected(node)}, got {value!r:.80}"
    return None


def check_raw_arguments(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Check the top level of ``arguments`` against a tool's own JSON ``schema``.

    Raises one :class:`ToolError` (``invalid_arguments``) in the style of
    :func:`invalid_arguments`: missing required arguments, unknown ones when the
    schema refuses extras, and values of the wrong type or outside an enum.
    Nested values are left to the tool.
    """
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    problems: list[str] = []
    for name in schema.get("required") or ():
        if name not in arguments:
            node = properties.get(name)
            what = expected(node) if isinstance(node, Mapping) else "a value"
            problems.append(f"missing required argument `{name}` ({what})")
    for name, value in arguments.items():
        node = properties.get(name)
        if node is None:
            if schema.get("additionalProperties") is False:
                accepted = ", ".join(properties) or "none"
                problems.append(f"unknown argument `{name}` (accepted: {accepted})")
            continue
        if isinstance(node, Mapping) and (problem := _raw_problem(name, value, node)):
            problems.append(problem)
    if problems:
        shown = problems[:_SHOWN_ERRORS]
        if len(problems) > _SHOWN_ERRORS:
            shown.append(f"and {len(problems) - _SHOWN_ERRORS} more")
        raise ToolError(f"{tool}: " + "; ".join(shown) + ".", code="invalid_arguments")


@dataclass(frozen=True)
class ToolSpec(Generic[A]):
    """A registered tool.

    ``args`` is the pydantic model of its arguments; ``handler`` receives a
    validated instance of it. ``description`` tells the model when and how to
    use the tool. ``role_allowlist`` / ``role_denylist`` are the tool's own
    gate, checked after the global role matrix.
    """

    name: str
    description: str
    args: type[A]
    handler: Callable[[A, ToolContext], Awaitable[ToolOutput | str]]
    role_allowlist: frozenset[str] | None = None
    role_denylist: frozenset[str] = frozenset()
    is_terminal: bool = False
    mutating: bool = False
    changes_files: bool = False
    """It may change the project's files: the executor awaits ``ToolServices.checkpoint`` first."""
    parallel: bool = False
    """Calls of a parallel tool in one round may run concurrently (e.g. ``dispatch``)."""
    raw_schema: Mapping[str, Any] | None = field(default=None, hash=False)
    """The tool's own JSON schema (an MCP tool's), offered as is; ``args`` is then
    :class:`RawArgs` and only the top level is checked (:func:`check_raw_arguments`)."""

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema the model sees: ``raw_schema``, else derived from ``args``."""
        if self.raw_schema is not None:
            return dict(self.raw_schema)
        return compact_schema(self.args)

    def parse_arguments(self, arguments: Mapping[str, Any]) -> A:
        """Validate decoded arguments; raise :class:`ToolError` (``invalid_arguments``)."""
        if self.raw_schema is not None:
            # null means "left out", as for every tool (ToolArgs)
            arguments = {key: value for key, value in arguments.items() if value is not None}
            check_raw_arguments(self.name, arguments, self.raw_schema)
        try:
            return self.args.model_validate(arguments)
        except ValidationError as exc:
            raise invalid_arguments(self.name, exc, self.input_schema) from None

    async def run(self, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolOutput | str:
        """Validate ``arguments`` and run the handler.

        The executor's path without its result normalisation, for callers (and
        tests) that hold a spec directly.
        """
        return await self.handler(self.parse_arguments(arguments), ctx)


@dataclass
class ToolResult:
    """The normalised outcome of one tool call (docs/DESIGN.md §5.6)."""

    call_id: str
    name: str
    ok: bool
    content: str
    error: str | None = None
    cancelled: bool = False
    mutation_state: MutationState = "none"
    metadata: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
