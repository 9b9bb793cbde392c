"""The command palette's Smith commands (ctrl+p).

Each entry runs an app action by name, so the palette and the key bindings share one
implementation. Textual's own entries (theme switcher, keys, screenshot, quit) come from
``App.get_system_commands`` and stay in the palette next to these.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from smith_tui.engine.roles import list_roles


@dataclass(frozen=True)
class PaletteEntry:
    """One palette command: what it is called, its help line, the app action it runs."""

    title: str
    help: str
    action: str


def palette_entries() -> list[PaletteEntry]:
    """Smith's palette commands, in the order they are listed."""
    entries = [
        PaletteEntry("New conversation", "Start an empty conversation", "new_conversation"),
        PaletteEntry("History", "Browse, search and open conversations", "open_history"),
        PaletteEntry("Config", "View and change settings", "open_config"),
        PaletteEntry("Transcript pager", "Read and search the whole transcript", "open_pager"),
        PaletteEntry("Inspect messages", "Edit or delete persisted messages", "open_inspect"),
        PaletteEntry("Help", "Every key and command", "open_help"),
        PaletteEntry(
            "Focus the dispatch tree",
            "The sub-agents' jobs; enter on one opens its transcript",
            "focus_dispatch",
        ),
        PaletteEntry(
            "Pause or resume the turn",
            "Hold the running turn at its next round boundary, or let it go on",
            "pause_turn",
        ),
        PaletteEntry(
            "Step the paused turn",
            "Run one more round of the paused turn, then pause again",
            "step_turn",
        ),
        PaletteEntry(
            "Expand or collapse tool calls",
            "Show or hide every tool call's result in the transcript",
            "toggle_tool_results",
        ),
    ]
    for role in list_roles(user_facing=True):
        entries.append(
            PaletteEntry(
                f"Switch role: {role.alias} ({role.name})",
                f"Run the next turns as {role.name}",
                f"switch_role({role.name!r})",
            )
        )
    entries.append(PaletteEntry("Quit", "Quit smith", "quit"))
    return entries


def command_entries(about: list[tuple[str, str]]) -> list[PaletteEntry]:
    """One entry per command file: put ``/name `` in the prompt, for its arguments."""
    return [
        PaletteEntry(f"Command: {name}", text, f"start_command({name!r})") for name, text in about
    ]


def model_entries(model_ids: list[str]) -> list[PaletteEntry]:
    """One entry per model of the server's catalog: pin it to the conversation."""
    return [
        PaletteEntry(
            f"Use model: {model_id}",
            f"Pin {model_id} to this conversation (/model {model_id})",
            f"pin_model({model_id!r})",
        )
        for model_id in model_ids
    ]


class SmithCommands(Provider):
    """Provides Smith's commands; choosing one runs ``app.run_action(entry.action)``."""

    def _command(self, entry: PaletteEntry) -> Callable[[], Awaitable[bool]]:
        return partial(self.app.run_action, entry.action)

    async def _entries(self) -> list[PaletteEntry]:
        """The commands, then the server's models (none when it cannot be asked)."""
        model_ids: list[str] = []
        completer = getattr(self.app, "completer", None)
        source = completer.sources.model_ids if completer is not None else None
        if source is not None:
            try:
                model_ids = list(await source())
            except Exception:  # no server, or it did not answer: the commands still show
                model_ids = []
        return palette_entries() + command_entries(self._file_commands()) + model_entries(model_ids)

    def _file_commands(self) -> list[tuple[str, str]]:
        """``(name, description)`` of the command files (none before the runtime is open)."""
        runtime = getattr(self.app, "runtime", None)
        if runtime is None:
            return []
        commands = runtime.services.command.file_commands()
        return [(name, f"{c.description} ({c.origin})") for name, c in commands.items()]

    async def discover(self) -> Hits:
        """All commands, before anything is typed."""
        for entry in await self._entries():
            yield DiscoveryHit(entry.title, self._command(entry), help=entry.help)

    async def search(self, query: str) -> Hits:
        """Commands whose title fuzzily matches ``query``."""
        matcher = self.matcher(query)
        for entry in await self._entries():
            score = matcher.match(entry.title)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(entry.title),
                    self._command(entry),
                    text=entry.title,
                    help=entry.help,
                )
