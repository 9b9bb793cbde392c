"""The Textual application: a thin shell around the runtime and the main screen."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import importlib
import importlib.util
from collections.abc import Callable, Coroutine
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import events
from textual.app import App
from textual.binding import BindingType
from textual.screen import Screen

from smith_tui.app import command_effects, questions
from smith_tui.app.bindings import APP_BINDINGS, key_for, keymap_for
from smith_tui.app.command_effects import PICKERS
from smith_tui.app.completion_sources import runtime_sources
from smith_tui.app.gc_policy import CHECK_EVERY_S, SETTLED_CHECK_EVERY_S, GcPolicy
from smith_tui.app.main_screen import MainScreen
from smith_tui.errors import error_text
from smith_tui.widgets.completion.candidates import Completer

if TYPE_CHECKING:
    from textual.command import Provider
    from textual.timer import Timer

    from smith_tui.app.bridge import EngineEventsArrived, EventBridge
    from smith_tui.app.early_status import EarlyStatus
    from smith_tui.app.terminal_notify import Notifier
    from smith_tui.engine import events as ev
    from smith_tui.engine.runtime import Runtime

#: The modal screens: name → (module, class); imported when first opened.
SCREENS: dict[str, tuple[str, str]] = {
    "pager": ("smith_tui.app.screens.pager_screen", "PagerScreen"),
    "inspect": ("smith_tui.app.screens.inspect_screen", "InspectScreen"),
    "history": ("smith_tui.app.screens.history_screen", "HistoryScreen"),
    "config": ("smith_tui.app.screens.config_screen", "ConfigScreen"),
    "help": ("smith_tui.app.screens.help_screen", "HelpScreen"),
    "rewind": ("smith_tui.app.screens.rewind_screen", "RewindScreen"),
}

#: Seconds after the runtime is open before garbage collection is managed (start-up settles).
GC_POLICY_DELAY_S = 1.0

#: Seconds after the runtime is open before the command files are looked for (off the first
#: frames; a broken one is a notice in the transcript then).
SETUP_DISCOVERY_DELAY_S = 0.5

#: Seconds ``quit`` waits for a cancelled turn to wind down (and persist) before exiting.
QUIT_GRACE_S = 3.0


def _stylesheet(name: str) -> Path:
    """The path of stylesheet ``name``, installed in the ``smith_tui.styles`` package.

    (Found by the package's spec: importlib.resources costs a few ms of start-up.)
    """
    spec = importlib.util.find_spec("smith_tui.styles")
    if spec is None or spec.origin is None:
        raise RuntimeError("smith_tui.styles is not installed: reinstall smith")
    return Path(spec.origin).with_name(name)


def screen_class(name: str) -> type[Screen[Any]]:
    """The screen class registered as ``name`` (its module is imported on first use)."""
    module_name, class_name = SCREENS[name]
    screen: type[Screen[Any]] = getattr(importlib.import_module(module_name), class_name)
    return screen


def _app_action(event: ev.Event) -> str:
    """The app action a successful command asks for (``quit``, a screen or a picker name),
    or ``""``."""
    from smith_tui.engine import events as ev

    if not isinstance(event, ev.CommandOutput) or not event.ok:
        return ""
    action = str(event.data.get("action") or "")
    return action if action == "quit" or action in SCREENS or action in PICKERS else ""


def smith_commands() -> type[Provider]:
    """The palette provider of Smith's commands (imported when the palette first opens)."""
    from smith_tui.app.screens.palette import SmithCommands

    return SmithCommands


class SmithApp(App[int]):
    """Agent Smith's full-screen session."""

    CSS_PATH: ClassVar[list[str | PurePath]] = [
        _stylesheet(name) for name in ("app.tcss", "transcript.tcss", "panes.tcss")
    ]
    TITLE = "Agent Smith"
    BINDINGS: ClassVar[list[BindingType]] = [*APP_BINDINGS]
    PAUSE_GC_ON_SCROLL = True
    COMMANDS = App.COMMANDS | {smith_commands}

    def __init__(
        self,
        runtime: Runtime | None = None,
        *,
        opener: Callable[[], Runtime] | None = None,
        pick: Callable[[Runtime], None] | None = None,
        animations: bool = True,
        early_status: Callable[[], EarlyStatus] | None = None,
    ) -> None:
        """Run on ``runtime``, or on the one ``opener`` returns once the first frame is up.

        Opening a runtime imports and reads the config, the store and the HTTP stack; with
        ``opener`` that happens in a thread after the prompt has painted. ``pick`` then
        chooses its conversation in the same thread (a long one takes a while to load):
        the status line shows the permission mode and sandbox before that. ``early_status``
        gives them for the first frame, before the runtime is open (app/early_status.py).
        """
        super().__init__()
        if runtime is None and opener is None:
            raise ValueError("SmithApp needs a runtime or an opener")
        self.runtime: Runtime | None = runtime
        self._opener = opener
        self._pick = pick
        self.early_status = early_status
        """The mode and sandbox for the first frame (waits for their reading thread)."""
        self._pending: list[str] = []
        self.startup_error: str | None = None
        """Why the runtime could not be opened (the app then exits with code 2)."""
        if not animations:
            self.animation_level = "none"
        self.keymap: dict[str, str] = {}
        self.completer = Completer(runtime_sources(_live_runtime(self)))
        self.bridge: EventBridge | None = None
        """Delivers the runtime's events as messages, from the moment it is open."""
        self.main_screen = MainScreen(_live_runtime(self))
        self.notifier: Notifier | None = None
        """Terminal notifications while the terminal lacks the focus (once the runtime is
        open; see `notifications`)."""
        self.gc_policy = GcPolicy()
        """When full garbage collections may pause the screen (see `gc_policy`); started
        after start-up unless ``services.ui.gc_policy`` is false."""
        self._gc_ticks: Timer | None = None
        """The policy's `CHECK_EVERY_S` ticks, paused while it is settled (then a tick
        comes every `SETTLED_CHECK_EVERY_S`)."""
        if runtime is not None:
            self._apply_keymap()

    @property
    def runtime_ready(self) -> bool:
        """Whether the runtime is open."""
        return self.runtime is not None

    @property
    def opened_runtime(self) -> Runtime:
        """The runtime, for the code that runs only once it is open."""
        if self.runtime is None:
            raise RuntimeError("the runtime is not open yet")
        return self.runtime

    def _apply_keymap(self) -> None:
        self.keymap = keymap_for(self.opened_runtime.config.model.services.ui.keys)
        self.set_keymap(self.keymap)

    def get_default_screen(self) -> Screen[Any]:
        """The main screen."""
        return self.main_screen

    def on_mount(self) -> None:
        """Start with the runtime given, or open it once the first frame is painted."""
        if self.runtime is not None:
            self._start()
        else:
            self.call_after_refresh(
                self.run_worker, self._open, thread=True, group="open", exit_on_error=False
            )

    def _open(self) -> None:
        assert self._opener is not None
        from smith_tui.engine.sandbox_status import warm_sandbox_probe

        try:
            runtime = self._opener()
        except Exception as exc:
            message = error_text(exc)
            self.call_from_thread(self._fail_start, message)
            return
        if self._pick is not None:
            warm_sandbox_probe(runtime.config.model)
            self.call_from_thread(self._show_session, runtime)
            try:
                self._pick(runtime)
            except Exception as exc:
                runtime.store.close()
                message = error_text(exc)
                self.call_from_thread(self._fail_start, message)
                return
        self.call_from_thread(self._opened, runtime)

    def _show_session(self, runtime: Runtime) -> None:
        """The status line's mode and sandbox, as soon as the config is read."""
        from smith_tui.widgets.status_line import StatusLine

        for status in self.main_screen.query(StatusLine):
            status.show_session(runtime)

    def _fail_start(self, message: str) -> None:
        self.startup_error = message
        self.exit(2, return_code=2)

    def _opened(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._apply_keymap()
        self._start()

    def _start(self) -> None:
        """Follow the runtime's events, fill the main screen; explain the setup on a first run."""
        # The engine's events (about 12 ms to import) are loaded by now, with the runtime.
        from smith_tui.app.bridge import EventBridge
        from smith_tui.app.terminal_notify import Notifier

        runtime = self.opened_runtime
        self.bridge = EventBridge(self)
        self.bridge.attach(runtime.bus.subscribe)
        runtime.ask_permission = self.ask_permission
        self.notifier = Notifier(
            self,
            lambda: runtime.config.model.notifications,
            title=lambda: runtime.conversations.title,
        )
        self.notifier.start()
        self.main_screen.runtime_ready()
        if not runtime.server_configured:
            from smith_tui.app.first_run import FirstRunScreen

            self.push_screen(FirstRunScreen(runtime))
        self._ask_hook_trust()
        pending, self._pending = self._pending, []
        for line in pending:
            self.submit_line(line)
        if runtime.config.model.services.ui.gc_policy:
            self.set_timer(GC_POLICY_DELAY_S, self._manage_gc)
        self.set_timer(SETUP_DISCOVERY_DELAY_S, self._discover_commands)

    def _ask_hook_trust(self) -> None:
        """The repository's .smith/settings.json hooks, if nobody answered for this content
        yet: show what they run and ask once (the answer is kept with the user's data)."""
        setup = self.opened_runtime.hook_setup
        project = setup.question(self.opened_runtime.scope.project_root)
        if project is None:
            return
        # Imported only when there is a question: the modal screens and importlib.resources
        # (with zipfile) are not needed before the first prompt otherwise.
        from smith_tui.app.screens.hook_trust_screen import HookTrustScreen

        def answered(trusted: bool | None) -> None:
            if trusted is not None:  # escape: not now, asked again next session
                setup.answer(project, trusted)

        self.push_screen(HookTrustScreen(project), answered)

    def _discover_commands(self) -> None:
        """Read the command files in a thread; their problems arrive as notices."""
        command = self.opened_runtime.services.command
        if hasattr(command, "file_commands"):
            self.run_worker(
                lambda: command.file_commands(fresh=True),
                thread=True,
                group="setup",
                exit_on_error=False,
            )

    def _manage_gc(self) -> None:
        self.gc_policy.start()
        self._gc_ticks = self.set_interval(CHECK_EVERY_S, self._gc_tick)
        self.set_interval(SETTLED_CHECK_EVERY_S, self._gc_check)

    def _gc_tick(self) -> None:
        """Run what the policy has due; pause the ticks once nothing can become due."""
        self.gc_policy.tick()
        if self._gc_ticks is not None and self.gc_policy.settled():
            self._gc_ticks.pause()

    def _gc_wake(self) -> None:
        """Tick again (input and engine events allocate: something may soon be due)."""
        if self._gc_ticks is not None:
            self._gc_ticks.resume()

    def _gc_check(self) -> None:
        """The settled policy's tick; quick ticks again once it is no longer settled (a
        timer's work piled up collections)."""
        self.gc_policy.tick()
        if not self.gc_policy.settled():
            self._gc_wake()

    async def on_event(self, event: events.Event) -> None:
        """Note input for the garbage-collection policy, then handle the event as usual."""
        if isinstance(event, (events.Key, events.MouseEvent)):
            self.gc_policy.input_seen()
            self._gc_wake()
        await super().on_event(event)

    def load_prices(self) -> None:
        """Fetch the model catalog in a worker and give its prices to the usage pane.

        Called once the panes are mounted: creating the HTTP client (TLS setup) and asking
        the server take longer than a frame, and the prompt must paint first.
        """
        if self.opened_runtime.server_configured:
            self.run_worker(self._load_prices(), group="catalog", exit_on_error=False)

    async def _load_prices(self) -> None:
        models = await self.opened_runtime.catalog()
        if models:
            self.main_screen.load_catalog(models)

    def on_unmount(self) -> None:
        """Stop following the runtime; leave garbage collection as Python has it."""
        if self.bridge is not None:
            self.bridge.detach()
        self.gc_policy.stop()

    # -- engine events --------------------------------------------------------------------

    def on_engine_events_arrived(self, message: EngineEventsArrived) -> None:
        """Hand a batch to the main screen and act on commands that need the app.

        A command the app answers with a screen (``/pager``, ``/help``…) or by quitting
        reaches the panes without its text: the screen shows it better than a notice.
        """
        from smith_tui.engine import events as ev

        actions = []
        events = []
        for event in message.events:
            if isinstance(event, ev.CommandOutput) and event.ok:
                if event.data.get("action") == "edit":
                    command_effects.edit_file(self, str(event.data.get("path") or ""))
                if event.data.get("action") == "copy":
                    text = str(event.data.get("text") or "")
                    command_effects.copy_text(self, self.keymap, text, event.text)
            if isinstance(event, ev.PlanPresented) and event.job_id is None:
                questions.show_plan(self, self.opened_runtime, event)
            action = _app_action(event)
            if action and isinstance(event, ev.CommandOutput):
                actions.append((action, event))
                event = dataclasses.replace(event, text="")
            events.append(event)
        self.main_screen.apply_events(events)
        if any(isinstance(e, ev.TurnFinished) and e.job_id is None for e in events):
            self.gc_policy.turn_ended()
        self._gc_wake()
        if self.notifier is not None:
            self.notifier.follow(events)
        for action, output in actions:
            if action in PICKERS:
                command_effects.open_picker(
                    self, self.opened_runtime, action, output, self.action_pin_model
                )
            else:
                self._command_action(action)

    def on_dispatch_tree_job_selected(self, message: Any) -> None:
        """A job chosen in the dispatch tree: open that sub-agent's own transcript."""
        from smith_tui.app.screens.child_transcript import ChildTranscriptScreen
        from smith_tui.widgets.dispatch_tree import DispatchTree

        if self.runtime is None or self.screen is not self.main_screen:
            return
        tree = self.main_screen.query_one("#dispatch", DispatchTree)
        self.push_screen(ChildTranscriptScreen(self.runtime, tree, message.job_id))

    def on_dispatch_tree_cancel_requested(self, message: Any) -> None:
        """Cancel the sub-agent selected in the dispatch tree (the parent turn goes on)."""
        if self.runtime is None:
            return
        if self.runtime.cancel_job(message.job_id):
            self.notify(f"Cancelling {message.job_id}…", timeout=2)
        else:
            self.notify("That sub-agent has already finished.", timeout=2)

    async def on_dispatch_tree_worktree_requested(self, message: Any) -> None:
        """Merge or drop the worktree of the worker chosen in the dispatch tree."""
        if self.runtime is None:
            return
        if self.runtime.busy:
            self.notify("A turn is running: merge or drop once it ends.", timeout=4)
            return
        done, said = await self.runtime.worktree(message.action, message.job_id)
        self.notify(said, severity="information" if done else "error", timeout=10)

    def action_external_editor(self) -> None:
        """Edit the prompt (or the value the screen on top is editing) in ``$VISUAL`` /
        ``$EDITOR``; what is saved comes back (a failed editor is a notice)."""
        from smith_tui.app import external_editor
        from smith_tui.widgets.prompt_input import PromptInput

        if self.screen is self.main_screen:
            prompt = self.main_screen.query_one(PromptInput)
            work: Coroutine[Any, Any, object] = external_editor.edit_text_area(self, prompt)
        elif isinstance(self.screen, external_editor.EditsExternally):
            work = self.screen.edit_externally()
        else:
            return
        self.run_worker(work, group="editor", exclusive=True, exit_on_error=False)

    def action_start_command(self, name: str) -> None:
        """Put ``name`` and a space in the prompt, for its arguments (the palette's command
        files)."""
        from smith_tui.widgets.prompt_input import PromptInput

        prompt = self.main_screen.query_one(PromptInput)
        prompt.focus()
        prompt.insert(f"{name} ")

    def _command_action(self, action: str) -> None:
        if action == "quit":
            self.run_worker(self.action_quit(), group="quit")
        elif action in SCREENS:
            self.open_screen(action)

    # -- turns ----------------------------------------------------------------------------

    def submit_line(self, text: str) -> bool:
        """Run a prompt line in a worker; ``False`` (with a hint) when it cannot run now."""
        if self.runtime is None:
            # Typed before the session finished opening: run it as soon as it is open.
            self._pending.append(text)
            return True
        if not text.strip().startswith("/") and self.runtime.busy:
            cancel = key_for(self.keymap, "cancel")
            self.notify(
                f"A turn is still running: wait for it or press {cancel} to cancel it.",
                severity="warning",
            )
            return False
        self.run_worker(self._run_line(text), group="turn", exclusive=False, exit_on_error=False)
        return True

    async def _run_line(self, text: str) -> None:
        try:
            await self.opened_runtime.submit(text)
        except Exception as exc:  # the runtime reports turn errors as events; this is the rest
            message = error_text(exc)
            self.notify(message, title="Could not run that", severity="error")

    async def ask_permission(self, request: Any) -> Any:
        """The runtime's ask port: the permission question (app/questions.py)."""
        return await questions.ask_permission(self, self.notifier, request)

    # -- actions --------------------------------------------------------------------------

    def cancel_turn(self) -> bool:
        """Cancel the running turn (with a notice); ``False`` when none is running."""
        if self.runtime is None or not self.runtime.busy:
            return False
        self.runtime.cancel_turn()
        self.notify("Cancelling the turn…", timeout=2)
        return True

    def action_cancel_or_copy(self) -> None:
        """Cancel the running turn; when idle copy the selection, or say how to quit."""
        if self.cancel_turn():
            return
        selected = self._selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.notify("Copied to the clipboard.", timeout=2)
            return
        quit_key = key_for(self.keymap, "quit")
        self.notify(f"Nothing to cancel: press {quit_key} to quit.", timeout=3)

    def _selected_text(self) -> str:
        try:
            focused = self.focused
            text = getattr(focused, "selected_text", "") if focused is not None else ""
            return text or self.screen.get_selected_text() or ""
        except Exception:
            return ""

    def open_screen(self, name: str) -> None:
        """Push the screen registered as ``name`` (unless it is already showing)."""
        if self.runtime is None:
            self.notify("Still opening the session; try again in a moment.", timeout=2)
            return
        cls = screen_class(name)
        if isinstance(self.screen, cls):
            return
        # Every registered screen is built on the runtime (Screen's own __init__ is not).
        screen = cast("Callable[[Runtime], Screen[Any]]", cls)(self.runtime)
        if name in ("inspect", "rewind"):
            # Edits, deletions and rewinds rebuild runtime.messages; show what is stored now.
            self.push_screen(screen, lambda _: self.main_screen.show_conversation())
        else:
            self.push_screen(screen)

    def action_cycle_mode(self) -> None:
        """Switch to the next permission mode (in the order of ``PERMISSION_MODES``)."""
        if self.runtime is None:
            return
        mode = self.runtime.cycle_permission_mode()
        when = " from the next turn" if self.runtime.busy else ""
        # The status line shows the mode in this key's frame (its event comes a bridge
        # frame later and sets the same value); the toast follows in the next frame: its
        # mount lays out the whole screen, which with a long transcript took 0.2-0.4 s.
        self.main_screen.show_mode(mode)
        self.call_after_refresh(self.notify, f"Permission mode: {mode}{when}.", timeout=2)

    def action_open_pager(self) -> None:
        """Read the whole transcript in the pager."""
        self.open_screen("pager")

    def show_pager(self, messages: Any, job_id: str | None = None) -> None:
        """The pager over ``messages`` (a sub-agent's, ``job_id``), above the current screen."""
        from smith_tui.app.screens.pager_screen import PagerScreen

        if self.runtime is not None:
            self.push_screen(PagerScreen(self.runtime, messages=messages, job_id=job_id))

    def action_open_inspect(self) -> None:
        """Inspect, edit or delete persisted messages."""
        self.open_screen("inspect")

    def action_open_history(self) -> None:
        """Browse the project's conversations."""
        self.open_screen("history")

    def action_open_config(self) -> None:
        """View and change settings."""
        self.open_screen("config")

    def action_open_help(self) -> None:
        """Commands and keys."""
        self.open_screen("help")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer the side-pane key only where there are side panes (the main screen)."""
        if action in ("toggle_side", "toggle_tool_results", "focus_dispatch"):
            return self.screen is self.main_screen
        if action == "external_editor":  # a screen offers it with an edit_externally()
            from smith_tui.app.external_editor import EditsExternally

            return self.screen is self.main_screen or isinstance(self.screen, EditsExternally)
        if action == "open_history":  # in vim's normal mode ctrl+r is the prompt's redo
            return not getattr(self.focused, "vim_normal", False)
        return True

    def action_toggle_side(self) -> None:
        """Show or hide the side panes (tools, dispatch, usage)."""
        if self.screen is self.main_screen:
            self.main_screen.action_toggle_side()

    def action_toggle_tool_results(self) -> None:
        """Expand every tool call of the transcript, or collapse them all when all are open."""
        if self.screen is self.main_screen:
            self.main_screen.toggle_tool_results()

    def action_focus_dispatch(self) -> None:
        """Put the focus on the dispatch tree (the side panes show if they were hidden)."""
        if self.screen is self.main_screen:
            self.main_screen.focus_dispatch()

    def action_pause_turn(self) -> None:
        """Pause the running turn at its next round boundary, or resume it (app/pausing.py)."""
        from smith_tui.app import pausing

        pausing.toggle(self)

    def action_step_turn(self) -> None:
        """Let the paused turn run one more round, then hold again (app/pausing.py)."""
        from smith_tui.app import pausing

        pausing.step(self)

    def on_dispatch_tree_pause_requested(self, message: Any) -> None:
        """Pause, resume or step the sub-agent under the dispatch tree's cursor."""
        from smith_tui.app import pausing

        if message.step:
            pausing.step(self, message.job_id)
        else:
            pausing.toggle(self, message.job_id)

    async def action_quit(self, confirmed: bool = False) -> None:
        """Quit; a running turn is cancelled first and given a moment to persist (a paused
        one asks first, unless ``confirmed``)."""
        from smith_tui.app import pausing

        if not confirmed and pausing.ask_before_quit(self):
            return
        if self.runtime is not None and self.runtime.busy:
            self.runtime.cancel_turn("quit")
            turns = [w for w in self.workers if w.group == "turn" and w.is_running]
            if turns:
                try:
                    await asyncio.wait_for(self.workers.wait_for_complete(turns), QUIT_GRACE_S)
                except TimeoutError:
                    pass
        self.exit(0)

    def action_new_conversation(self) -> None:
        """Start an empty conversation (``/new``)."""
        self.submit_line("/new")

    def action_switch_role(self, name: str) -> None:
        """Run the next turns as role ``name`` (``/role NAME``)."""
        self.submit_line(f"/role {name}")

    def action_pin_model(self, model_id: str) -> None:
        """Pin ``model_id`` to the conversation (``/model ID``)."""
        self.submit_line(f"/model {model_id}")


def _pick_conversation(runtime: Runtime, resume: str | None, continue_: bool) -> None:
    if resume:
        runtime.conversations.load(resume, reason="resume")
    elif continue_:
        if runtime.conversations.continue_latest() is None:
            runtime.conversations.new()
    else:
        runtime.conversations.prepare()  # a new conversation is stored with its first message


def run_app(
    runtime: Runtime | None = None,
    *,
    opener: Callable[[], Any] | None = None,
    resume: str | None = None,
    continue_: bool = False,
    early_status: Callable[[], EarlyStatus] | None = None,
) -> int:
    """Run the full-screen app until the user quits; returns the exit code.

    Give an open ``runtime``, or an ``opener`` that opens one (the CLI does: the prompt
    then paints before the config, store and HTTP stack are loaded). The conversation is
    picked from ``resume``/``continue_``; a bad ``--resume`` id or a runtime that cannot
    be opened is reported on stderr with exit code 2. The runtime is closed on the way out.
    ``early_status``: the mode and sandbox of the first frame (see ``SmithApp``).
    """
    import sys

    def open_runtime() -> Runtime:
        if runtime is not None:
            return runtime
        assert opener is not None, "run_app needs a runtime or an opener"
        opened: Runtime = opener()
        return opened

    def pick(opened: Runtime) -> None:
        _pick_conversation(opened, resume, continue_)

    async def main() -> tuple[int | None, str | None, str]:
        app = SmithApp(opener=open_runtime, pick=pick, early_status=early_status)
        hint = ""
        try:
            code = await app.run_async()
        finally:
            if app.runtime is not None:
                hint = resume_hint(app.runtime)
                await app.runtime.aclose()
        return code, app.startup_error, hint

    # What is loaded by now (modules, classes) lives as long as the process: frozen out of
    # the cycle collector's view, a full collection in the first frame walks only what the
    # app has created since (walking all of it took ~15 ms of the first paint). The
    # garbage-collection policy unfreezes everything for its thorough collections.
    gc.freeze()
    code, error, hint = asyncio.run(main())
    if error:
        sys.stderr.write(f"smith: {error}\n")
        return 2
    if hint:
        # Printed after the app has left the alternate screen: it stays in the terminal.
        sys.stdout.write(hint + "\n")
    return int(code or 0)


def resume_hint(runtime: Runtime) -> str:
    """How to come back to the conversation on screen, or ``""`` when there is none stored."""
    conversations = runtime.conversations
    conversation_id = conversations.conversation_id
    # The newest message only: reading all of a long conversation took 0.3-0.7 s at quit.
    if not conversation_id or not conversations.recent(1):
        return ""
    return (
        f"To resume this conversation, run: smith --continue  (or smith --resume {conversation_id})"
    )


class _LiveRuntime:
    """Stands for the app's runtime before it is open: attribute reads go to it once set.

    Until then every attribute is missing, so ``getattr(x, name, default)`` gives the
    default (the completion sources and the main screen rely on that).
    """

    def __init__(self, app: SmithApp) -> None:
        self._app = app

    def __getattr__(self, name: str) -> Any:
        runtime = self._app.runtime
        if runtime is None:
            raise AttributeError(name)
        return getattr(runtime, name)

    def __bool__(self) -> bool:
        return self._app.runtime is not None


def _live_runtime(app: SmithApp) -> Runtime:
    """A :class:`_LiveRuntime` of ``app``, typed as the runtime it reads through to."""
    return cast("Runtime", _LiveRuntime(app))
