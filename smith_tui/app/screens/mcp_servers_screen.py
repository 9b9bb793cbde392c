"""Edit the whole ``mcp_servers`` table as JSON (opened from the config screen).

The editor shows the table with every ``env`` and ``headers`` value masked (and other
secrets redacted as on the config screen). On save, a value the user left masked takes
back the value stored before, so a secret is never shown and never overwritten by its
mask. The result is validated with the same checks as the config file, written into the
user's config file (its other keys kept) and the runtime's config is reloaded.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Static, TextArea

from smith_tui.app.screens.config_rows import HIDDEN, MCP_SERVERS, mcp_server_shown
from smith_tui.app.screens.modal import SmithModal
from smith_tui.config import ConfigError, check_config, thaw
from smith_tui.config.user_file import write_user_setting
from smith_tui.errors import error_text

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

MASK_MARK = "••••"
"""Part of every mask (:data:`HIDDEN`, a URL's hidden password): left in, it was not retyped."""


def masked_servers(servers: dict[str, Any]) -> dict[str, Any]:
    """The ``mcp_servers`` table as the editor shows it (secrets masked)."""
    return {name: mcp_server_shown(server) for name, server in servers.items()}


def parse_servers(text: str) -> dict[str, Any]:
    """The table typed in the editor; ``ValueError`` saying what to fix when it is not one."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"Invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}."
        ) from None
    if not isinstance(data, dict):
        raise ValueError(
            'mcp_servers must be a JSON object of servers: {"name": {"command": ...}}.'
        )
    return data


def unmask_servers(edited: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """``edited`` with every value left masked replaced by the stored one.

    A masked ``env``/``headers`` entry takes the stored value of the same server and name;
    another field left exactly as shown takes its stored value. ``ValueError`` names the
    place when a mask is left where nothing was stored (e.g. a renamed server).
    """
    result: dict[str, Any] = {}
    for name, server in edited.items():
        old = stored.get(name)
        if not isinstance(server, dict) or not isinstance(old, dict):
            result[name] = server
            continue
        shown = mcp_server_shown(old)
        fixed: dict[str, Any] = {}
        for key, value in server.items():
            old_value = old.get(key)
            if key in ("env", "headers") and isinstance(value, dict):
                old_table = old_value if isinstance(old_value, dict) else {}
                fixed[key] = {
                    item: old_table[item] if text == HIDDEN and item in old_table else text
                    for item, text in value.items()
                }
            elif key in old and value == shown.get(key):
                fixed[key] = old_value
            else:
                fixed[key] = value
        result[name] = fixed
    for name, server in result.items():
        if MASK_MARK in json.dumps(server, ensure_ascii=False):
            raise ValueError(
                f"mcp_servers.{name}: a masked value ({MASK_MARK}) has no stored value to keep; "
                "type the real value there."
            )
    return result


def validate_servers(effective: dict[str, Any], servers: dict[str, Any]) -> None:
    """Check ``servers`` as the loader would with the rest of ``effective``; ``ConfigError``."""
    merged = dict(effective)
    merged[MCP_SERVERS] = servers
    try:
        check_config(merged)
    except ConfigError as exc:
        raise ConfigError("Invalid mcp_servers:\n  " + exc.message.replace("\n", "\n  ")) from None


def changed_servers(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Names of the servers added, removed or changed (sorted)."""
    names = set(before) | set(after)
    return sorted(name for name in names if before.get(name) != after.get(name))


class McpServersScreen(SmithModal):
    """A JSON editor for ``mcp_servers``; dismisses with the changed server names on save."""

    AUTO_FOCUS = "#mcp-editor"
    DEFAULT_CSS = """
    McpServersScreen { align: center middle; }
    #mcp-dialog {
        width: 90%; height: 90%; border: round $accent; background: $surface; padding: 0 1;
    }
    #mcp-editor { height: 1fr; }
    #mcp-help { color: $text-muted; height: auto; }
    #mcp-error { color: $error; height: auto; display: none; }
    #mcp-error.-shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Cancel"),
        Binding("ctrl+s", "save", "Save", priority=True),
    ]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__()
        self.runtime = runtime

    def _stored(self) -> dict[str, Any]:
        servers: dict[str, Any] = thaw(self.runtime.config.effective.get(MCP_SERVERS) or {})
        return servers

    def compose(self) -> ComposeResult:
        """Help line, the JSON editor, the error line, footer."""
        text = json.dumps(masked_servers(self._stored()), indent=2, ensure_ascii=False)
        with Vertical(id="mcp-dialog") as dialog:
            dialog.border_title = "MCP servers (JSON)"
            yield Static(
                f"The whole mcp_servers table. {HIDDEN} keeps the stored secret; "
                "ctrl+s saves into the config file, esc cancels.",
                id="mcp-help",
                markup=False,
            )
            yield TextArea(text, id="mcp-editor", soft_wrap=True, show_line_numbers=True)
            yield Static("", id="mcp-error", markup=False)
        yield Footer()

    def action_save(self) -> None:
        """Parse, restore masked values, validate, write the file, reload; or show why not."""
        stored = self._stored()
        try:
            edited = parse_servers(self.query_one("#mcp-editor", TextArea).text)
            servers = unmask_servers(edited, stored)
            validate_servers(thaw(self.runtime.config.effective), servers)
            write_user_setting(self.runtime.config.user_config_path, MCP_SERVERS, servers)
            self.runtime.reload_config()
        except Exception as exc:  # each step explains what to fix
            self._set_error(error_text(exc))
            return
        self.dismiss(changed_servers(stored, servers))

    def _set_error(self, text: str) -> None:
        error = self.query_one("#mcp-error", Static)
        error.update(text)
        error.set_class(bool(text), "-shown")
