"""Sub-agents from agent files: each ``*.md`` becomes a child role Smith and Tank may
dispatch to.

Files are read from ``$XDG_CONFIG_HOME/smith/agents/`` (the user's) and the project's
``.smith/agents/`` and ``.claude/agents/`` (the user's first: on a name clash the first
wins). The front matter holds ``name``, ``description``, ``tools`` (a list, a
comma-separated string, or ``inherit``/absent for all of them), ``model`` and ``color``;
the body is the role's prompt profile.

What a file may not do (a repository is untrusted):

* widen the tools: a file role gets only the tools it lists that the built-in worker has
  (:data:`CEILING`); anything else is dropped with a notice naming the file and line;
* choose the model from a project file (it decides what the user pays): only a user's
  agent file may set ``model``; a project file's is ignored with a notice (set
  ``models.<name>`` in the config instead);
* change the permission mode, rules, sandbox or MCP servers: no key does that.

Which report a file role writes: a worker's (changes, verification) when its tools
include ``edit``, ``write`` or ``bash``, else an explorer's (findings with evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from smith_tui.dispatch.report_schema import ROLE_FIELDS
from smith_tui.engine.matrix import TOOL_MATRIX, allowed_tools
from smith_tui.engine.roles import RoleSpec, is_reserved_name, resolve_role
from smith_tui.engine.setup_files import (
    CLAUDE_TOOLS,
    Origin,
    SetupFileError,
    SetupProblem,
    clash,
    entries,
    read_setup_file,
)
from smith_tui.engine.skills import key_line, one_line

if TYPE_CHECKING:
    from smith_tui.config.front_matter import MetaCache

NAME_PATTERN = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?$")
#: The tools a file role may have at most: the built-in worker's.
CEILING = allowed_tools("worker")
#: Tools that make a file role worker-shaped (it may change things).
CHANGING_TOOLS = frozenset({"edit", "write", "bash"})

#: What an agent file's ``Read`` brings besides ``read``: the code navigation tools the
#: built-in explorer reads with (a command file's ``Read`` narrows to ``read`` alone).
READ_COMPANIONS = ("code_outline", "code_symbols", "code_map")
#: smith's own tool names, accepted as they are.
SMITH_TOOLS = frozenset(TOOL_MATRIX)

#: Colour names agent files use → the tint shown (dispatch tree, rain, usage pane).
COLOURS = {
    "red": "#FF5555",
    "orange": "#FFB86C",
    "yellow": "#F1FA8C",
    "green": "#50FA7B",
    "cyan": "#8BE9FD",
    "blue": "#6EA8FF",
    "purple": "#BD93F9",
    "pink": "#FF79C6",
    "white": "#F8F8F2",
    "gray": "#A0A0A0",
    "grey": "#A0A0A0",
}
_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


@dataclass(frozen=True)
class AgentFile:
    """One agent file as read: the role it defines and where it came from."""

    role: RoleSpec
    origin: Origin
    path: Path


def _tools(
    text: str, path: Path, raw: list[str] | None, problems: list[SetupProblem]
) -> frozenset[str]:
    """The file's tools, mapped to smith's and cut to :data:`CEILING` (``report`` added)."""
    if raw is None or [name.lower() for name in raw] == ["inherit"]:
        return CEILING | {"report"}
    chosen: set[str] = set()
    for name in raw:
        mapped = CLAUDE_TOOLS.get(name.lower()) or ((name,) if name in SMITH_TOOLS else ())
        if name.lower() == "read":
            mapped = (*mapped, *READ_COMPANIONS)
        line = _token_line(text, "tools", name)
        if not mapped:
            problems.append(
                SetupProblem(
                    path,
                    line,
                    f"unknown tool {name!r} is left out (smith's names: "
                    f"{', '.join(sorted(CEILING))}; Claude Code's Read, Grep, Glob, LS, Edit, "
                    "MultiEdit, Write, Bash are mapped to them)",
                )
            )
            continue
        wide = [tool for tool in mapped if tool not in CEILING]
        if wide:
            problems.append(
                SetupProblem(
                    path,
                    line,
                    f"tool {name!r} ({', '.join(wide)}) is left out: a sub-agent from a file "
                    "never gets more than the built-in worker's tools",
                )
            )
        chosen.update(tool for tool in mapped if tool in CEILING)
    return frozenset(chosen | {"report"})


def _token_line(text: str, key: str, token: str) -> int:
    """The line naming ``token`` at or after ``key:`` in the front matter (else the key's)."""
    start = key_line(text, key)
    lines = text.splitlines()
    pattern = re.compile(rf"(?<![\w-]){re.escape(token)}(?![\w-])")
    for number in range(start, min(len(lines), start + 200) + 1):
        line = lines[number - 1]
        if number > start and (line.strip() == "---" or re.match(r"^\w[\w-]*:", line)):
            break
        if pattern.search(line):
            return number
    return start


def _tint(
    text: str, path: Path, value: str | None, shape: str, problems: list[SetupProblem]
) -> str:
    default = resolve_role(shape).tint or "#FF4FD8"
    if value is None:
        return default
    if _HEX.match(value):
        return value.upper()
    colour = COLOURS.get(value.lower())
    if colour is None:
        problems.append(
            SetupProblem(
                path,
                key_line(text, "color"),
                f"unknown color {value!r} (use {', '.join(sorted(set(COLOURS)))} or #RRGGBB); "
                f"the {shape}'s colour is used",
            )
        )
        return default
    return colour


def _model(
    text: str,
    path: Path,
    origin: Origin,
    value: str | None,
    name: str,
    problems: list[SetupProblem],
) -> str | None:
    if value is None or value.lower() == "inherit":
        return None
    if origin.kind == "project":
        problems.append(
            SetupProblem(
                path,
                key_line(text, "model"),
                f"model {value!r} is ignored: a project's agent file may not choose the model "
                f"(it decides what you pay); set models.{name} in your config instead",
            )
        )
        return None
    return value


def profile_text(name: str, body: str, shape: str) -> str:
    """The prompt profile of a file role: who it is, the file's body, how to finish."""
    fields = ", ".join(f"`{field}`" for field in ROLE_FIELDS[shape])
    return "\n\n".join(
        [
            f"# You are {name}",
            f"You are {name}, a sub-agent. Another agent dispatched you with a task; only your "
            "report reaches it.",
            body.strip(),
            "## Finishing\nCall the `report` tool exactly once, last: `status` (ok, partial or "
            f"blocked), `summary`, {fields} and `limitations`."
            + (
                " A report with findings must include evidence (path:line, a command, a URL)."
                if shape == "explorer"
                else ""
            ),
            "A message starting with `[state snapshot]` gives today's date; it comes from the "
            "system.",
        ]
    )


def read_agent(
    origin: Origin, path: Path, cache: MetaCache | None = None
) -> tuple[AgentFile | None, list[SetupProblem]]:
    """The role ``path`` defines (``None`` when it cannot be used) and its problems
    (``cache``: front matter parsed before)."""
    # yaml is imported with the first file read, never with the runtime
    from smith_tui.config.front_matter import FrontMatterError, list_field, split, text_field

    problems: list[SetupProblem] = []
    try:
        text = read_setup_file(origin, path)
        document = split(text, cache)
    except SetupFileError as exc:
        return None, [SetupProblem(path, 1, f"agent not loaded: {exc}")]
    except FrontMatterError as exc:
        return None, [SetupProblem(path, exc.line, f"agent not loaded: {exc.message}")]
    meta = document.meta
    name = (text_field(meta, "name") or path.stem).lower()
    if not NAME_PATTERN.match(name):
        return None, [
            SetupProblem(
                path,
                key_line(text, "name"),
                f"agent not loaded: the name {name!r} must be letters, digits, '-' or '_' "
                "(at most 40)",
            )
        ]
    if is_reserved_name(name):
        return None, [
            SetupProblem(
                path,
                key_line(text, "name"),
                f"agent not loaded: {name!r} is a built-in role's name; choose another",
            )
        ]
    description = one_line(text_field(meta, "description") or "")
    if not description:
        return None, [
            SetupProblem(
                path,
                key_line(text, "description"),
                "agent not loaded: the front matter needs a description (when to use this "
                "sub-agent), e.g. description: Reviews a change for bugs",
            )
        ]
    tools_value = meta.get("tools")
    raw = None if tools_value is None else list_field(meta, "tools")
    tools = _tools(text, path, raw, problems)
    shape = "worker" if tools & CHANGING_TOOLS else "explorer"
    role = RoleSpec(
        name=name,
        alias=name,
        user_facing=False,
        can_dispatch=False,
        dispatch_targets=(),
        prompt_profile=shape,
        tint=_tint(text, path, text_field(meta, "color"), shape, problems),
        prompt_text=profile_text(name, document.body, shape),
        tools=tools,
        shape=shape,
        description=description,
        model=_model(text, path, origin, text_field(meta, "model"), name, problems),
        source=str(path),
    )
    return AgentFile(role, origin, path), problems


def discover_agents(
    folders: list[Origin], cache: MetaCache | None = None
) -> tuple[list[AgentFile], list[SetupProblem]]:
    """Every agent file in ``folders`` (first origin wins a name), and the problems found."""
    agents: dict[str, AgentFile] = {}
    problems: list[SetupProblem] = []
    for origin in folders:
        for entry in entries(origin):
            if not entry.name.endswith(".md"):
                continue
            path = Path(entry.path)
            found, found_problems = read_agent(origin, path, cache)
            problems += found_problems
            if found is None:
                continue
            first = agents.setdefault(found.role.name, found)
            if first is not found:
                problems.append(clash("agent", found.role.name, path, first.path))
    return sorted(agents.values(), key=lambda a: a.role.name), problems


def agents_block(agents: list[RoleSpec]) -> str:
    """The ``## Sub-agents from files`` block for a role that may dispatch (``""`` when
    there are none)."""
    if not agents:
        return ""
    lines = [
        "## Sub-agents from files",
        "Besides worker and explorer you may dispatch to these (target_role: the name):",
    ]
    for spec in agents:
        tools = ", ".join(sorted((spec.tools or frozenset()) - {"report"})) or "no tools"
        lines.append(f"- {spec.name} ({tools}): {spec.description[:300]}")
    return "\n".join(lines)
