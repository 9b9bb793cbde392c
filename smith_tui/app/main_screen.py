"""The main screen: transcript, side panes, todo list, status line, prompt and footer.

The status line, prompt and footer paint first; the four content panes (whose modules pull
in Markdown parsing and more), the rain and the todo list (both hidden while idle) are
imported and mounted right after that first frame, so the prompt is ready as early as
possible. Events that arrive meanwhile are held and delivered once the panes are in place.
The engine's event classes are loaded with the runtime, in its opening thread: this module
imports them only where events are handled.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea

from smith_tui.app.footer import SmithFooter
from smith_tui.widgets.completion.candidates import Completer
from smith_tui.widgets.completion.menu import CompletionMenu
from smith_tui.widgets.prompt_input import PromptInput
from smith_tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from smith_tui.engine import events as ev
    from smith_tui.engine.runtime import Runtime
    from smith_tui.widgets.transcript import Transcript
    from smith_tui.widgets.usage_pane import UsagePane


@runtime_checkable
class SmithHost(Protocol):
    """What the screen uses of the app that hosts it (the app module imports this one)."""

    completer: Completer

    def load_prices(self) -> None:
        """Start reading the model catalog's prices."""

    def submit_line(self, text: str) -> bool:
        """Hand one prompt line to the runtime; ``False`` when it was not taken."""

    def cancel_turn(self) -> bool:
        """Cancel the running turn; ``False`` when none is running."""


@runtime_checkable
class EventSink(Protocol):
    """A widget that follows engine events: every widget named in :data:`SINK_IDS`.

    (Textual widgets cannot subclass a Protocol, so the screen checks each sink when it
    looks it up instead of trusting that the method is there.)
    """

    def handle_event(self, event: ev.Event) -> None:
        """Update from one engine event."""


@runtime_checkable
class ConversationView(EventSink, Protocol):
    """The sink that also shows a whole stored conversation at once (the transcript)."""

    loader: Callable[[int, int], Sequence[Mapping[str, Any]]] | None
    """``loader(before_position, limit)``: stored messages older than those shown."""

    newer_loader: Callable[[int, int], Sequence[Mapping[str, Any]]] | None
    """``newer_loader(after_position, limit)``: stored messages after a position (``Home``
    in a long conversation opens at its first messages and reads on from there)."""

    turn_marks: Callable[[list[str]], Mapping[str, dict[str, Any]]] | None
    """``turn_marks(turn_ids)``: the stored checkpoint marks of those turns that changed files."""

    turn_records: Callable[[list[str]], Mapping[str, Mapping[str, Any]]] | None
    """``turn_records(turn_ids)``: the stored records of those turns (roles, notices)."""

    def load_messages(self, messages: list[dict[str, Any]]) -> object:
        """Replace what is shown with ``messages`` (stored, wire-shaped)."""


#: The content panes, mounted into their slots after the first frame: id → title.
PANE_TITLES: dict[str, str] = {
    "transcript": "Transcript",
    "tools": "Tools",
    "dispatch": "Dispatch",
    "usage": "Usage",
}

#: Seconds between the first frame and mounting the content panes (at least).
PANES_DELAY_S = 0.1

#: Seconds the background start (catalog, MCP servers, setup files) waits at most for the
#: reopened conversation to be on screen.
BACKGROUND_AFTER_S = 5.0

#: The widgets that follow engine events, in delivery order.
SINK_IDS = ("transcript", "tools", "dispatch", "usage", "status", "todo", "rain")
#: The sink that shows the whole conversation when it is loaded.
CONVERSATION_VIEW_ID = "transcript"


def _bound_in(widget: Widget | None, key: str) -> bool:
    """Whether ``widget`` or a container of it below the screen binds ``key`` (the
    dispatch tree's ``x``, a tree's ``space``…)."""
    node: DOMNode | None = widget
    while isinstance(node, Widget) and not isinstance(node, Screen):
        for cls in type(node).__mro__:
            for binding in getattr(cls, "BINDINGS", ()):
                keys = binding.key if isinstance(binding, Binding) else binding[0]
                if key in (one.strip() for one in keys.split(",")):
                    return True
        node = node.parent
    return False


OPEN_MESSAGES = 200
"""Stored messages read when a conversation is shown (more than ``FIRST_PAGE`` entries)."""

FIRST_PAGE = 16
"""Entries a stored conversation opens with: about a screenful. Each mounted Markdown
entry costs milliseconds, so opening with 50 took 0.3-0.4 s longer; older ones are
mounted a page at a time as the user scrolls up."""


def make_idle_hidden(kitty_graphics: bool) -> dict[str, Widget]:
    """The rain and the todo list by id: hidden while idle, so mounted with the panes."""
    from smith_tui.widgets.matrix_rain import MatrixRain
    from smith_tui.widgets.todo_panel import TodoPanel

    return {"rain": MatrixRain(id="rain", graphics=kitty_graphics), "todo": TodoPanel(id="todo")}


def make_panes(stream_refresh_s: float) -> dict[str, Widget]:
    """The four content panes by id (imported here, after the first frame); the transcript
    updates a streaming answer every ``stream_refresh_s`` seconds."""
    from smith_tui.widgets.activity import ToolActivity
    from smith_tui.widgets.dispatch_tree import DispatchTree
    from smith_tui.widgets.transcript import Transcript
    from smith_tui.widgets.usage_pane import UsagePane

    panes: dict[str, Widget] = {
        "transcript": Transcript(
            id="transcript", first_page=FIRST_PAGE, flush_interval=stream_refresh_s
        ),
        "tools": ToolActivity(id="tools"),
        "dispatch": DispatchTree(id="dispatch"),
        "usage": UsagePane(id="usage"),
    }
    for pane_id, title in PANE_TITLES.items():
        panes[pane_id].border_title = title
    return panes


#: Below this many columns the side panes start hidden (the toggle key shows them).
SIDE_MIN_WIDTH = 100


class MainScreen(Screen[None]):
    """Where the conversation happens."""

    AUTO_FOCUS = "#prompt"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt", show=False),
    ]

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(id="main")
        self.runtime = runtime
        self.queued: list[str] = []
        """Prompts typed during a turn, sent one per finished turn (oldest first)."""
        self.panes_ready = False
        """Whether the content panes are mounted (shortly after the first frame)."""
        self._held: list[ev.Event] = []
        self._failed_panes: set[str] = set()
        self._mounted = False
        self._started = False
        self._first_frame_at: float | None = None
        self._side_choice: bool | None = None
        self._conversation_load: Awaitable[object] | None = None
        """The transcript's last load, to await (``None`` when it failed)."""
        self._resumed_said: object = None
        """The resume (``engine.active_conversation.Resumed``) the screen has said already."""

    @property
    def smith(self) -> SmithHost:
        """The app, typed."""
        app = self.app
        assert isinstance(app, SmithHost), f"{type(app).__name__} cannot host the main screen"
        return app

    def compose(self) -> ComposeResult:
        """Build the layout; the content panes go into their slots after the first frame."""
        with Horizontal(id="body"):
            with Vertical(id="transcript-column"):
                yield Container(id="transcript-slot", classes="slot")
            with Vertical(id="side"):
                yield Container(id="tools-slot", classes="slot")
                yield Container(id="dispatch-slot", classes="slot")
                yield Container(id="usage-slot", classes="slot")
        yield CompletionMenu(id="completion")
        yield StatusLine(id="status")
        yield Static("", id="queued", markup=False)
        yield PromptInput(id="prompt", completer=self.smith.completer)
        yield SmithFooter(show_command_palette=False)

    def _kitty_rain(self) -> bool:
        if self.app.is_headless or not self.runtime:
            return False
        from smith_tui.widgets.matrix_rain import use_kitty_graphics

        setting = self.runtime.config.model.services.ui.kitty_graphics
        return use_kitty_graphics(os.environ, setting)

    @property
    def side_shown(self) -> bool:
        """Whether the side panes (tools, dispatch, usage) are showing."""
        return bool(self.query_one("#side").display)

    def action_toggle_side(self) -> None:
        """Show or hide the side panes, at any width; the choice then outlasts resizes."""
        self._side_choice = not self.side_shown
        self.query_one("#side").display = self._side_choice

    def toggle_tool_results(self) -> None:
        """Expand or collapse every tool call of the transcript."""
        if self.panes_ready:
            self._transcript().toggle_tool_results()

    def focus_dispatch(self) -> None:
        """Focus the dispatch tree, showing the side panes first when they are hidden."""
        if not self.panes_ready:
            return
        if not self.side_shown:
            self.action_toggle_side()
        from smith_tui.widgets.dispatch_tree import DispatchTree

        self.query_one("#dispatch", DispatchTree).focus_tree()

    def on_resize(self) -> None:
        """Hide the side panes on a narrow terminal, unless the user chose otherwise."""
        if self._side_choice is None:
            self.query_one("#side").display = self.size.width >= SIDE_MIN_WIDTH

    def on_screen_suspend(self) -> None:
        """A screen covers this one: pause the rain (a Kitty image would show through)."""
        self._suspend_rain(True)

    def on_screen_resume(self) -> None:
        """Uncovered again: whatever closed, typing goes to the prompt."""
        self._suspend_rain(False)
        self.query_one(PromptInput).focus()

    def _suspend_rain(self, suspended: bool) -> None:
        # The rain is mounted with the panes: a screen may cover this one before that.
        from smith_tui.widgets.matrix_rain import MatrixRain

        for rain in self.query("#rain").results(MatrixRain):
            rain.suspended = suspended

    def on_key(self, event: events.Key) -> None:
        """Text typed while a pane has the focus goes to the prompt instead of being lost."""
        prompt = self.query_one(PromptInput)
        focused = self.focused
        if focused is prompt or isinstance(focused, Input | TextArea):
            return
        if event.is_printable and event.character and not _bound_in(focused, event.key):
            event.stop()
            event.prevent_default()
            prompt.focus()
            prompt.insert(event.character)

    def on_mount(self) -> None:
        """Wire the prompt to its menu; the rest waits for the runtime."""
        prompt = self.query_one(PromptInput)
        prompt.menu = self.query_one(CompletionMenu)
        prompt.take_queued = self.take_queued
        prompt.vim_enabled = self._vim_keys_on
        self.query_one("#queued").display = False
        if self.app.animation_level == "none":
            prompt.cursor_blink = False  # a blinking cursor makes frames differ
        self._mounted = True
        self.call_after_refresh(self._first_frame_painted)
        if self.runtime:
            self.runtime_ready()
        elif (early := getattr(self.app, "early_status", None)) is not None:
            # Read before the runtime is open (app/early_status.py): in the first frame.
            shown = early()
            self.query_one(StatusLine).show_early(shown.mode, shown.sandbox, shown.sandbox_active)

    def _vim_keys_on(self) -> bool:
        """``services.ui.vim`` as configured now (the prompt asks at every key)."""
        return bool(self.runtime and self.runtime.config.model.services.ui.vim)

    def runtime_ready(self) -> None:
        """The runtime is open: fill the status line, then mount the panes (once)."""
        if self._started or not getattr(self, "_mounted", False):
            return
        self._started = True
        status = self.query_one(StatusLine)
        status.role = self.runtime.active_role
        self.query_one(PromptInput).show_role(self.runtime.active_role)
        status.model = self.runtime.model or self._configured_model()
        status.show_session(self.runtime)
        self.refresh_title()
        # After the first frame, and a moment more: the frame reaches the terminal through
        # Textual's writer thread, which the panes' imports would otherwise hold up.
        # (When the runtime took longer than that to open, the first frame is long out.)
        painted = self._first_frame_at
        waited = time.monotonic() - painted if painted is not None else 0.0
        # (A timer, not a callback: mounting the panes awaits their mounts, which this
        # screen's own message loop must stay free to serve. Textual refuses a 0 s timer.)
        delay = max(0.01, PANES_DELAY_S - waited)
        self.call_after_refresh(self.set_timer, delay, self._mount_panes)

    def _first_frame_painted(self) -> None:
        self._first_frame_at = time.monotonic()

    @property
    def _alive(self) -> bool:
        """False once the app is closing (its widgets may already be gone)."""
        return self.is_attached and self.app.is_running

    async def _mount_panes(self) -> None:
        if not self._alive:
            return
        hidden = make_idle_hidden(self._kitty_rain())
        await self.query_one("#transcript-column").mount(hidden["rain"])
        await self.mount(hidden["todo"], before="#completion")
        self._suspend_rain(self.app.screen is not self)
        refresh_s = self.runtime.config.model.services.ui.stream_refresh_s
        for pane_id, pane in make_panes(refresh_s).items():
            if not self._alive:
                return  # the user quit while the panes were being mounted
            await self.query_one(f"#{pane_id}-slot").mount(pane)
        if not self._alive:
            return
        # The panes are laid out (and painted) once before the conversation goes in: entries
        # mounted into a transcript that has no size yet were laid out twice, first at no
        # width, and the frame between showed none of them (a reopened 30 KB answer: a
        # heavy layout more before its last line was on screen). (After this handler: the
        # screen lays out only once it is free.)
        self.call_after_refresh(self._panes_laid_out)

    def _panes_laid_out(self) -> None:
        """The panes have their sizes: show the conversation and the events held meanwhile."""
        if not self._alive:
            return
        self.panes_ready = True
        self.show_conversation()
        held, self._held = self._held, []
        self.apply_events(held)
        # The rest starts once the conversation is on screen: the catalog's HTTP client,
        # the MCP servers and the setup files would otherwise hold up its first paint.
        shown = self._conversation_load
        self.run_worker(self._start_background(shown), group="setup", exit_on_error=False)

    async def _start_background(self, shown: Awaitable[object] | None) -> None:
        if shown is not None:
            with contextlib.suppress(Exception):  # (a failed load is the transcript's to say)
                await asyncio.wait_for(asyncio.shield(shown), BACKGROUND_AFTER_S)
        if not self._alive:
            return
        self.smith.load_prices()
        # MCP servers start with the session, in the background, once the transcript is
        # there to show a failure notice (a server that fails at once must not be missed).
        self.runtime.start_mcp()
        # The skills and sub-agents from files: found off the first frame, for completion
        # and /agents; a turn looks again anyway (only changed files are read).
        await self.runtime.refresh_setup()

    def load_catalog(self, models: list[Any]) -> None:
        """Hand the model catalog (prices) to the usage pane."""
        if not self._alive:
            return
        usage = self._usage()
        self._guarded(usage, usage.load_catalog, models)

    def _configured_model(self) -> str:
        value = self.runtime.config.effective.get("default_model")
        return str(value) if value else ""

    def _sink(self, pane_id: str, protocol: type[object] = EventSink) -> Any:
        """The widget ``#pane_id``; TypeError when it does not implement ``protocol``."""
        widget = self.query_one(f"#{pane_id}")
        if not isinstance(widget, protocol):
            raise TypeError(
                f"#{pane_id} ({type(widget).__name__}) does not implement {protocol.__name__}"
            )
        return widget

    @property
    def sinks(self) -> list[EventSink]:
        """The widgets that follow engine events, in delivery order."""
        return [self._sink(pane_id) for pane_id in SINK_IDS]

    def show_conversation(self) -> None:
        """Load the active conversation into the panes (after mount, load, new, clear)."""
        runtime = self.runtime
        # The newest messages only, older pages from the store as the user scrolls up: the
        # open costs the same whatever the conversation's length.
        messages = runtime.conversations.recent(OPEN_MESSAGES)
        view: ConversationView = self._sink(CONVERSATION_VIEW_ID, ConversationView)
        view.loader = runtime.conversations.before
        view.newer_loader = runtime.conversations.after
        view.turn_marks = runtime.turn_marks
        view.turn_records = runtime.conversations.turn_records
        shown = self._guarded(view, view.load_messages, messages)
        usage = self._usage()
        self._guarded(usage, usage.show_conversation, self._stored_usage())
        tools = self.query_one("#tools")
        load_calls = getattr(tools, "load_calls", None)  # (a stand-in pane may lack it)
        if load_calls is not None:
            self._guarded(tools, load_calls, runtime.stored_calls())
        from smith_tui.widgets.todo_panel import TodoPanel

        todo = self.query_one("#todo", TodoPanel)
        todo.set_items(list(runtime.conversations.todo))
        prompt = self.query_one(PromptInput)
        prompt.load_history(runtime.conversations.prompts(prompt.prompt_history.limit))
        self.refresh_title()
        self._say_resumed()
        self._conversation_load = shown if inspect.isawaitable(shown) else None

    def _say_resumed(self) -> None:
        """A conversation reopened without being picked just now (plain ``smith``,
        ``--continue``) says so once, in the transcript and the status line (until the next
        turn): the next prompt sends its whole context."""
        from smith_tui.engine.active_conversation import ago, resumed_line

        resumed = self.runtime.conversations.resumed
        if resumed is None or resumed is self._resumed_said:
            return
        self._resumed_said = resumed
        transcript = self._transcript()
        self._guarded(transcript, transcript.add_notice, resumed_line(resumed))
        title = resumed.title or "last conversation"
        self.query_one(
            StatusLine
        ).title = f"resumed {title} · {ago(time.time() - resumed.last_active)}"

    def _stored_usage(self) -> list[Any]:
        """The active conversation's stored usage rows (none before it has one)."""
        conversation_id = self.runtime.conversations.conversation_id
        if not conversation_id:
            return []
        return list(self.runtime.store.usage.list_for_conversation(conversation_id))

    def show_mode(self, mode: str) -> None:
        """Show the permission mode in the status line now (the key that changed it does
        not wait for the runtime's event)."""
        if self._mounted:
            self.query_one(StatusLine).mode = mode

    def refresh_title(self) -> None:
        """Show the conversation's title in the status line."""
        self.query_one(StatusLine).title = self.runtime.conversations.title

    def apply_events(self, events: list[ev.Event]) -> None:
        """Deliver a batch of engine events to every pane (held until the panes exist)."""
        from smith_tui.engine import events as ev
        from smith_tui.widgets.event_batches import coalesce

        if not self.panes_ready:
            # Merged, so a tool flooding its output meanwhile is held as a few lines only.
            self._held = coalesce([*self._held, *events])
            return
        if not self._alive:
            return  # the app is closing; the panes may be gone already
        sinks = self.sinks
        for event in events:
            for pane in sinks:
                self._guarded(pane, pane.handle_event, event)
            if isinstance(event, ev.ConversationChanged):
                self.show_conversation()
            elif isinstance(event, ev.TurnFinished) and event.job_id is None:
                self._send_queued(event.stop_reason)
                self.refresh_title()
                self.query_one(StatusLine).model = self.runtime.model or ""
            elif isinstance(event, ev.CommandOutput):  # /role and /model change these
                status = self.query_one(StatusLine)
                status.role = self.runtime.active_role
                self.query_one(PromptInput).show_role(self.runtime.active_role)
                status.model = self.runtime.model or self._configured_model()

    def _guarded(self, pane: object, method: Any, argument: Any) -> Any:
        """Call a pane (returns what it returns); one failing pane must not take the
        session down (``None`` then)."""
        try:
            return method(argument)
        except Exception as exc:
            name = type(pane).__name__
            self.log.error(f"{name} failed on {argument!r:.200}: {exc!r}")
            if name not in self._failed_panes:
                self._failed_panes.add(name)
                self.notify(f"{name} could not show an update: {exc}", severity="error")

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        """Send the prompt to the runtime and show the newest output; during a turn a prompt
        (not a command) is queued. Put back in the prompt when it cannot run now."""
        text = message.text
        if self.runtime and self.runtime.busy and not text.strip().startswith("/"):
            self.queued.append(text)
            self._show_queued()
        elif not self.smith.submit_line(text):
            message.prompt.load_text(text)
            message.prompt.move_cursor(message.prompt.document.end)
            return
        self._follow_transcript()

    def on_turn_changes_show_diff(self, message: Any) -> None:
        """A transcript mark of a turn that changed files asked for the turn's diff."""
        from smith_tui.app.screens.turn_diff_screen import TurnDiffScreen
        from smith_tui.engine.checkpoints import TurnLabels

        message.stop()
        entry = message.entry
        count = len(entry.files)
        labels = TurnLabels(self.runtime.store)
        name = labels.label(self.runtime.conversations.conversation_id, entry.turn_id)
        title = f"{name}: {count} file{'s' if count != 1 else ''} changed"
        self.app.push_screen(TurnDiffScreen(self.runtime, entry.checkpoint, title))

    def on_prompt_input_scroll_requested(self, message: PromptInput.ScrollRequested) -> None:
        """PageUp/PageDown (and Home/End in the empty prompt) scroll the transcript."""
        if not self.panes_ready:
            return
        transcript = self._transcript()
        if message.key == "home":
            # During a turn every page above is loaded instead (see Transcript.scroll_to_start).
            transcript.scroll_to_start(turn_running=bool(self.runtime and self.runtime.busy))
        elif message.key == "end":
            transcript.follow()
        else:
            transcript.page(-1 if message.key == "pageup" else 1)

    def _follow_transcript(self) -> None:
        if self.panes_ready and self._alive:
            self._transcript().follow()

    def _transcript(self) -> Transcript:
        """The transcript pane, once the panes are mounted (its module is loaded by then)."""
        from smith_tui.widgets.transcript import Transcript

        return self.query_one("#transcript", Transcript)

    def _usage(self) -> UsagePane:
        """The usage pane, once the panes are mounted."""
        from smith_tui.widgets.usage_pane import UsagePane

        return self.query_one("#usage", UsagePane)

    def action_interrupt(self) -> None:
        """Escape: interrupt the running turn (ctrl+c does too)."""
        self.smith.cancel_turn()

    # -- prompts queued behind a running turn ---------------------------------------------
    def take_queued(self) -> str | None:
        """Remove the newest queued prompt and return it (to edit it), or ``None``."""
        if not self.queued:
            return None
        text = self.queued.pop()
        self._show_queued()
        return text

    def _show_queued(self) -> None:
        box = self.query_one("#queued", Static)
        box.display = bool(self.queued)
        if not self.queued:
            box.update("")
            return
        lines = [f"⏸ queued: {' '.join(text.split())}" for text in self.queued]
        lines.append("  sent when this turn ends · ↑ takes it back to edit · esc interrupts")
        box.update("\n".join(lines))

    def _send_queued(self, stop_reason: str) -> None:
        """The turn ended: send the next queued prompt; after an interruption the queued
        prompts go back into the prompt instead (the user stopped to change course)."""
        if not self.queued:
            return
        if stop_reason == "cancelled":
            prompt = self.query_one(PromptInput)
            texts = [*self.queued, prompt.text] if prompt.text.strip() else self.queued
            self.queued = []
            prompt.load_text("\n\n".join(texts))
            prompt.move_cursor(prompt.document.end)
            self.notify("The turn was interrupted: the queued prompt is back in the prompt.")
        else:
            text = self.queued.pop(0)
            if not self.smith.submit_line(text):
                self.queued.insert(0, text)
        self._show_queued()
