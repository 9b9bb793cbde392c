"""The rows of the config screen: every documented setting with its value and source.

Secrets never reach a row: values under secret-looking names (``api_key``, ``token``,
``password``...) are replaced by :data:`HIDDEN`, and passwords inside URLs are masked.
The *name* of the key variable (``llm_config.api_key_env``) is not a secret and shows.
MCP servers' ``env`` and ``headers`` values are hidden whatever their names: they are
where tokens for those servers get written. ``mcp_servers`` is a table of tables: it
shows as one row per server, not on the override allowlist; the config screen edits the
whole table as JSON in its own editor (:mod:`mcp_servers_screen`), written to the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from smith_tui.config import (
    EffectiveConfig,
    OverrideError,
    coerce_value,
    get_value,
    settings_reference,
    thaw,
)
from smith_tui.config.defaults import (
    DEFAULT_ACTIVE_ROLE,
    DEFAULT_TOOL_STEP_BUDGET,
    DEFAULT_TRANSPORT_TIMEOUTS,
)

HIDDEN = "•••• (hidden)"
"""What a secret value shows as."""

MODEL_KEY_TEMPLATE = "models.<key>"
MCP_SERVERS = "mcp_servers"
_MCP_HIDDEN_TABLES = ("env", "headers")

_SECRET_NAME = re.compile(
    r"(api[_-]?key|apikey|secret|passw(or)?d|(^|[_-])token$|^token|authorization|credential)",
    re.IGNORECASE,
)
_URL_PASSWORD = re.compile(r"(://[^/@:\s]+):[^/@\s]+@")


def is_secret_name(name: str) -> bool:
    """Whether a setting called ``name`` holds a secret (``*_env`` names a variable: no)."""
    lowered = name.lower()
    if lowered.endswith("_env") or lowered.endswith("_variable"):
        return False
    return bool(_SECRET_NAME.search(lowered))


def redact(value: Any, name: str = "") -> Any:
    """A plain copy of ``value`` with secrets hidden (``name`` is the key it is stored under)."""
    value = thaw(value)
    if name and is_secret_name(name) and value not in (None, "", [], {}):
        return HIDDEN
    if isinstance(value, dict):
        return {key: redact(item, str(key)) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    if isinstance(value, str):
        return _URL_PASSWORD.sub(r"\1:••••@", value)
    return value


def value_text(value: Any) -> str:
    """How a (redacted) value reads in the table: ``absent``, plain text, or JSON."""
    if value is None:
        return "absent"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def edit_text(value: Any) -> str:
    """What the value box is prefilled with, so that saving it unchanged keeps the value."""
    if value is None or value == HIDDEN:
        return ""
    if isinstance(value, str) and isinstance(coerce_value(value), str):
        return value
    return json.dumps(value, ensure_ascii=False)


def mcp_server_shown(server: Any) -> Any:
    """One ``mcp_servers`` entry with its env and header values hidden, the rest redacted."""
    server = redact(server)
    if not isinstance(server, dict):
        return server
    return {
        key: {name: HIDDEN for name in value}
        if key in _MCP_HIDDEN_TABLES and isinstance(value, dict)
        else value
        for key, value in server.items()
    }


NO_LIMIT = "no limit"

#: What an absent setting stands for (the value its consumer applies), by path.
ABSENT_MEANS: dict[str, str] = {
    **{f"llm_config.{name}": f"{secs:g}" for name, secs in DEFAULT_TRANSPORT_TIMEOUTS.items()},
    "active_role": DEFAULT_ACTIVE_ROLE,
    "tool_step_budget": str(DEFAULT_TOOL_STEP_BUDGET),
    "budget.turn_tokens": NO_LIMIT,
    "budget.conversation_tokens": NO_LIMIT,
    "budget.turn_cost_usd": NO_LIMIT,
    "budget.conversation_cost_usd": NO_LIMIT,
}
PERMISSION_MODE = "permissions.mode"
FRONT_END_DEFAULT = "app default"
"""The source of ``permissions.mode`` when no layer sets it (the front end's own mode)."""


@dataclass(frozen=True)
class SettingRow:
    """One line of the config screen."""

    path: str
    value: Any
    """The effective value, secrets hidden (``None`` when absent)."""
    source: str
    """The layer the value comes from (``defaults``, ``user``, ``env``, ``persisted``...)."""
    description: str
    default: str
    editable: bool
    """Whether the screen may set or unset it (the runtime override allowlist)."""
    absent_means: str = ""
    """When ``value`` is ``None``: the value in effect instead (``""``: nothing is)."""

    @property
    def is_template(self) -> bool:
        """The ``models.<key>`` row that stands for a key not set yet."""
        return self.path == MODEL_KEY_TEMPLATE


def source_of(config: EffectiveConfig, path: str) -> str:
    """The layer ``path`` comes from; ``defaults`` for a setting no layer has."""
    try:
        return config.source_of(path)
    except KeyError:
        return "defaults"


def _value_of(config: EffectiveConfig, path: str) -> Any:
    try:
        return get_value(config, path)
    except (OverrideError, KeyError, ValueError):
        return None


def setting_rows(config: EffectiveConfig, front_end_mode: str = "") -> list[SettingRow]:
    """Every setting of the reference, ``models.<key>`` expanded to the keys in effect;
    ``front_end_mode`` is the permission mode used while ``permissions.mode`` is absent."""
    rows: list[SettingRow] = []
    for doc in settings_reference():
        if doc.path == MODEL_KEY_TEMPLATE:
            models = thaw(config.effective.get("models") or {})
            for key in sorted(models):
                path = f"models.{key}"
                rows.append(
                    SettingRow(
                        path,
                        redact(models[key], key),
                        source_of(config, path),
                        doc.description,
                        "absent",
                        True,
                    )
                )
            rows.append(SettingRow(doc.path, None, "", doc.description, "absent", True))
            continue
        if doc.path == MCP_SERVERS:
            servers = thaw(config.effective.get(MCP_SERVERS) or {})
            shown = {name: mcp_server_shown(server) for name, server in servers.items()}
            source = source_of(config, doc.path)
            rows.append(SettingRow(doc.path, shown, source, doc.description, doc.default, False))
            for name in sorted(shown):
                path = f"{MCP_SERVERS}.{name}"
                about = f"MCP server {name}. {doc.description}"
                rows.append(
                    SettingRow(path, shown[name], source_of(config, path), about, "absent", False)
                )
            continue
        last = doc.path.rsplit(".", 1)[-1]
        value = redact(_value_of(config, doc.path), last)
        source = source_of(config, doc.path)
        means = ABSENT_MEANS.get(doc.path, "") if value is None else ""
        if value is None and doc.path == PERMISSION_MODE and front_end_mode:
            means, source = front_end_mode, FRONT_END_DEFAULT
        rows.append(
            SettingRow(
                doc.path, value, source, doc.description, doc.default, doc.overridable, means
            )
        )
    return rows


def lookup_row(rows: list[SettingRow], path: str) -> SettingRow | None:
    """The row for ``path``, if any."""
    return next((row for row in rows if row.path == path), None)
