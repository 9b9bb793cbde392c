"""The multi-line prompt: enter submits, history on up/down, completion dropdown, and vim
keys when ``services.ui.vim`` is on (:mod:`.vim_keys`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import TextArea

from smith_tui.engine.roles import role_display
from smith_tui.widgets.completion.candidates import Completer, Completion
from smith_tui.widgets.completion.menu import CompletionMenu
from smith_tui.widgets.textual_compat import paint_now
from smith_tui.widgets.vim_keys import Mode, VimKeys

PLACEHOLDER = "Ask {role}… (enter sends, ctrl+j new line, / commands, @ files)"
"""The empty prompt's hint; it names the role that answers (:meth:`PromptInput.show_role`)."""

#: Keys that insert a newline instead of submitting.
NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j", "alt+enter"})
#: Keys the prompt hands on as :class:`PromptInput.ScrollRequested` (the transcript scrolls).
SCROLL_KEYS = frozenset({"pageup", "pagedown"})
#: Keys handed on the same way while the prompt is empty (with text they move the cursor).
SCROLL_KEYS_WHEN_EMPTY = frozenset({"home", "end"})
#: The prompt's border title in vim's normal mode (insert mode shows none).
NORMAL_MODE_TITLE = "NORMAL"


class PromptHistory:
    """Previous submissions, walked from the newest back, with the unsent draft kept aside."""

    def __init__(self, entries: list[str] | None = None, limit: int = 500) -> None:
        self.limit = limit
        self.entries: list[str] = []
        self._index: int | None = None
        self._draft = ""
        for entry in entries or []:
            self.add(entry)

    @property
    def browsing(self) -> bool:
        """Whether an older entry is currently shown."""
        return self._index is not None

    def add(self, text: str) -> None:
        """Remember a submission (a repeat of the newest entry is kept once)."""
        self._index = None
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        del self.entries[: -self.limit]

    def older(self, current: str) -> str | None:
        """The entry before the shown one (``current`` is kept as the draft), or ``None``."""
        if not self.entries:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self.entries) - 1
        elif self._index > 0:
            self._index -= 1
        else:
            return None
        return self.entries[self._index]

    def newer(self) -> str | None:
        """The entry after the shown one, the draft past the newest, or ``None`` when not browsing."""
        if self._index is None:
            return None
        if self._index < len(self.entries) - 1:
            self._index += 1
            return self.entries[self._index]
        self._index = None
        return self._draft


class PromptInput(TextArea):
    """Where the user types requests and slash commands."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [  # the key: services.ui.keys.paste_image
        Binding(  # priority: before vim keys' reading of alt+v as esc v
            "alt+v",
            "paste_image",
            "Paste an image",
            id="smith.paste_image",
            show=False,
            priority=True,
        ),
    ]

    class Submitted(Message):
        """The user pressed enter on a non-empty prompt."""

        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

        @property
        def control(self) -> PromptInput:
            """The prompt that was submitted."""
            return self.prompt

    class ScrollRequested(Message):
        """A scrolling key (``pageup``, ``pagedown``, ``home``, ``end``) meant for the view
        above the prompt."""

        def __init__(self, prompt: PromptInput, key: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.key = key

        @property
        def control(self) -> PromptInput:
            """The prompt the key was pressed in."""
            return self.prompt

    def __init__(
        self,
        *,
        completer: Completer | None = None,
        history: list[str] | None = None,
        placeholder: str = PLACEHOLDER.format(role="Smith"),
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(
            "",
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=placeholder,
            id=id,
            classes=classes,
        )
        self.completer = completer
        self.prompt_history = PromptHistory(history)
        self.role_shown = ""
        """The role alias the placeholder names (set by :meth:`show_role`)."""
        self.menu: CompletionMenu | None = None
        self._completion_generation = 0
        self._recalled = False
        self.take_queued: Callable[[], str | None] | None = None
        """Takes back the newest prompt queued behind a running turn (``None``: none); up in
        the empty prompt calls it before walking the history."""
        self.vim_enabled: Callable[[], bool] = lambda: False
        """Whether vim keys are on, asked at every key (so a changed setting holds at once)."""
        self.vim = VimKeys(self, on_mode=self._show_mode, newline_keys=NEWLINE_KEYS)
        """The vim modes and motions (used only while :attr:`vim_enabled` says so)."""

    def show_role(self, role: str) -> None:
        """Name ``role`` (its alias: ``Ask Tank…``) in the placeholder."""
        alias = role_display(role)[0]
        if alias != self.role_shown:
            self.role_shown = alias
            self.placeholder = PLACEHOLDER.format(role=alias)

    def load_history(self, entries: list[str]) -> None:
        """Replace the history with ``entries`` (oldest first)."""
        self.prompt_history = PromptHistory(entries)

    def submit(self) -> None:
        """Submit the current text (no-op when blank)."""
        text = self.text
        if not text.strip():
            return
        self.prompt_history.add(text)
        self.clear()
        self._close_menu()
        self.vim.reset()  # a new prompt starts in insert mode
        self.post_message(self.Submitted(self, text))

    def _replace_all(self, text: str) -> None:
        self._recalled = True  # a recalled entry opens no completion menu
        self.load_text(text)
        self.move_cursor(self.document.end)

    async def _on_paste(self, event: events.Paste) -> None:
        """A pasted path of an image file (a file dropped on the terminal) goes in as its
        ``@path`` attachment (engine/prompt_images.py); any other paste as it came."""
        from smith_tui.engine.prompt_images import pasted_image_token

        token = pasted_image_token(event.text)
        if token is None or self.read_only:
            return  # TextArea's own handler inserts the paste
        event.prevent_default()
        self.insert_token(token)

    def action_paste_image(self) -> None:
        """Attach the desktop clipboard's image as its ``@path`` (widgets/clipboard_paste.py)."""
        from smith_tui.widgets.clipboard_paste import paste_clipboard_image

        self.run_worker(paste_clipboard_image(self.app, self), group="paste_image", exclusive=True)

    def insert_token(self, token: str) -> None:
        """Put ``token`` (an ``@path``) and a space where the cursor is, over the selection
        (after a space too when it would follow a word: ``@`` only counts at a word's start);
        in vim's normal mode after the character under the cursor, as ``p`` puts."""
        if self.vim_normal and not self._has_selection():
            self.move_cursor_relative(columns=1)
        start = min(self.selection)
        before = self.get_text_range((start[0], 0), start)
        space = " " if before and not before[-1].isspace() else ""
        if result := self._replace_via_keyboard(f"{space}{token} ", *self.selection):
            self.move_cursor(result.end_location)

    async def on_key(self, event: events.Key) -> None:
        """Handle the prompt's own keys before the text area (which then never sees them)."""
        # Once every handler of the key has run, draw what it changed in the prompt at once:
        # while an answer streams, the screen's next update waits for the transcript's
        # write and lays out the whole screen first (see textual_compat.paint_now).
        self.call_next(paint_now, self)
        if self._handle_key(event.key, event.character if event.is_printable else None):
            event.stop()
            event.prevent_default()

    @property
    def vim_normal(self) -> bool:
        """Whether vim keys are on and in normal mode (the app then leaves ``ctrl+r``, redo,
        to the prompt)."""
        return self.vim.mode is Mode.NORMAL and self.vim_enabled()

    def _show_mode(self, mode: Mode) -> None:
        self.border_title = NORMAL_MODE_TITLE if mode is Mode.NORMAL else None
        if mode is Mode.NORMAL:
            self._close_menu()
        self.refresh_bindings()  # ctrl+r: the history screen, or redo in normal mode

    def _handle_key(self, key: str, character: str | None = None) -> bool:
        menu = self.menu
        if menu is not None and menu.is_open:
            if key in ("up", "down"):
                menu.move(-1 if key == "up" else 1)
                return True
            if key == "escape":
                self._close_menu()
                return True
            if key in ("tab", "enter") and self.accept_completion():
                return True
        if key == "enter":
            self.submit()
            return True
        if self.vim_enabled():
            routed = self.vim.handle(key, character)
            if routed is None:
                return True
            if routed != key:  # k on the first line, j on the last: the history
                self._handle_plain_key(routed)
                self.vim.settle()
                return True
        elif self.vim.mode is not Mode.INSERT:
            self.vim.reset()  # vim keys were turned off in normal mode
        return self._handle_plain_key(key)

    def _handle_plain_key(self, key: str) -> bool:
        """The prompt's keys that are not vim's (``True`` when one was used)."""
        if key in SCROLL_KEYS or (key in SCROLL_KEYS_WHEN_EMPTY and not self.text):
            self.post_message(self.ScrollRequested(self, key))
            return True
        if key == "up" and not self.text and self.take_queued is not None:
            queued = self.take_queued()
            if queued is not None:
                self._replace_all(queued)
                return True
        if key in NEWLINE_KEYS:
            start, end = sorted(self.selection)
            self.replace("\n", start, end, maintain_selection_offset=False)
            return True
        if key == "up" and self.cursor_location[0] == 0 and not self._has_selection():
            entry = self.prompt_history.older(self.text)
            if entry is not None:
                self._replace_all(entry)
                self.move_cursor((0, len(self.document[0])))
            return entry is not None or self.prompt_history.browsing
        if key == "down" and self._on_last_row() and not self._has_selection():
            entry = self.prompt_history.newer()
            if entry is not None:
                self._replace_all(entry)
                return True
        return False

    def _on_last_row(self) -> bool:
        return self.cursor_location[0] == self.document.line_count - 1

    def _has_selection(self) -> bool:
        start, end = self.selection
        return start != end

    # --- completion -------------------------------------------------------------

    def accept_completion(self) -> bool:
        """Put the highlighted candidate in place of the token; ``False`` when there is none."""
        menu = self.menu
        if menu is None or menu.completion is None:
            return False
        candidate = menu.selected
        completion = menu.completion
        if candidate is None:
            return False
        if not self._still_current(completion) or candidate.value == completion.token:
            # Nothing to add, or the menu was computed for text typed since (keys can
            # outrun the completion worker): enter falls through to submit what is shown.
            self._close_menu()
            return False
        line = self.document[completion.row]
        new_line, column = completion.replaced(line, candidate)
        self.replace(
            new_line,
            (completion.row, 0),
            (completion.row, len(line)),
            maintain_selection_offset=False,
        )
        self.move_cursor((completion.row, column))
        self._close_menu()
        return True

    def _still_current(self, completion: Completion) -> bool:
        """Whether ``completion``'s token is still in the text with the cursor at its end."""
        row, column = self.cursor_location
        if row != completion.row or column != completion.end:
            return False
        line = self.document[row] if row < self.document.line_count else ""
        return line[completion.start : completion.end] == completion.token

    def _close_menu(self) -> None:
        self._completion_generation += 1
        if self.menu is not None:
            self.menu.close()

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self._recalled:
            self._recalled = False
            self._close_menu()
            return
        if self.vim_normal:
            return  # a normal-mode edit opens no completion menu
        self.refresh_completion()

    def _on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        menu = self.menu
        if menu is None or menu.completion is None:
            return
        row, column = self.cursor_location
        completion = menu.completion
        if row != completion.row or not completion.start <= column <= completion.end:
            menu.close()  # a pending refresh for new text may still reopen it

    def refresh_completion(self) -> None:
        """Recompute the candidates for the text at the cursor (in a worker)."""
        if self.completer is None or self.menu is None:
            return
        self._completion_generation += 1
        generation = self._completion_generation
        # A callable, not a coroutine: a worker replaced before it starts leaves nothing unawaited.
        # (mypy infers Never from Textual's WorkType union for any async callable.)
        self.run_worker(
            partial(self._complete, generation, self.text, *self.cursor_location),  # type: ignore[arg-type]
            group="completion",
            exclusive=True,
            exit_on_error=False,
        )

    async def _complete(self, generation: int, text: str, row: int, column: int) -> None:
        assert self.completer is not None
        completion = await self.completer.complete(text, row, column)
        if generation != self._completion_generation or self.menu is None:
            return  # the text changed meanwhile
        if self.text != text or self.cursor_location != (row, column):
            return  # changed, and the refresh for the change has not started yet
        self.menu.show(completion)
