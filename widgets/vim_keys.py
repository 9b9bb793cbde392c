"""Vim keys for the prompt (``services.ui.vim``): the modal state machine.

One :class:`VimKeys` drives one Textual :class:`~textual.widgets.TextArea`. The contract:

* The owner (the prompt) hands every key to :meth:`VimKeys.handle` while vim keys are on —
  after its completion menu and enter (which submits in either mode) had their turn — and
  does what the answer says: ``None``, the key was used here; a key name, handle that key as
  it would be without vim keys: the key itself (it means nothing to vim), or ``up`` /
  ``down`` for ``k`` on the first line and ``j`` on the last, so that normal mode walks the
  prompt history there as the arrows do.
* It starts in insert mode, so typing works at once. Insert mode leaves every key to the
  prompt except escape, which switches to normal mode (the cursor steps back onto the last
  character typed, as in vim). In normal mode escape drops a pending count or operator; with
  nothing pending it is not used, so it reaches the app as it does without vim keys (escape
  interrupts a running turn: in insert mode that takes two presses).
* An ``alt+`` key with a character is read as escape and that key (a terminal cannot tell
  them apart when they come fast: see :func:`_escaped_character`).
* Normal mode uses every printable key, backspace (``h``), delete (``x``) and the new-line
  keys (swallowed): none of them types text. Other keys (arrows, home/end, page keys, ctrl
  combinations, the app's keys) keep their usual meaning.
* Normal mode knows: motions ``h l j k w b e 0 ^ $ gg G``, with a count (``3w``); the
  operators ``d c y`` with a motion or doubled (``dd cc yy``), counts on either side
  (``2d3w``); ``x X D C``; ``p P`` from one internal register (every delete and yank fills
  it; never the system clipboard); ``u`` and ``ctrl+r`` (the TextArea's own undo and redo);
  ``i a I A o O``; ``r<char>``. A word is vim's: a run of letters, digits and underscores,
  or a run of other non-blank characters. The word motions are computed here (the
  TextArea's stop at word ends, vim's ``w`` at word starts); every edit goes through the
  TextArea (``replace``, ``insert``, ``delete``), so its undo history records it.
* Counts are cut to :data:`MAX_COUNT` and a put to :data:`MAX_PUT_CHARS`, so a slip of the
  finger cannot hang the prompt; a motion stops repeating once it stops moving.
* After a command the cursor rests on a character, never past the end of a non-empty line.
* Each normal-mode command is one undo step; insert mode's typing is batched by the
  TextArea as usual.
* ``on_mode`` is called with the new mode whenever the mode changes (the prompt shows it).

Known limits: no visual mode, text objects (``ciw``), ``.``, ``f``/``t``, marks, named
registers or macros; ``j`` and ``k`` move by screen row in soft-wrapped text (as the arrows
do) while ``dj``/``dk`` take whole lines; a change (``c``, ``o``, ``O``) and the text typed
after it are undone in two steps; a paste (the terminal's) inserts in either mode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from textual.widgets import TextArea
from textual.widgets.text_area import Location


class Mode(Enum):
    """The two modes of the prompt under vim keys."""

    INSERT = "insert"
    NORMAL = "normal"


_REDO = "<redo>"
#: The largest count a command takes (``99999x`` is ``9999x``): a mistyped count cannot
#: hang the prompt.
MAX_COUNT = 9999
#: The most text one ``p``/``P`` puts (its count is cut to stay under it).
MAX_PUT_CHARS = 1_000_000
#: Motions normal mode moves by (``g`` starts ``gg``).
MOTIONS = frozenset("hljkwbe0^$G")
#: Operators that take a motion (or are doubled for whole lines).
OPERATORS = frozenset("dcy")
#: Motions that take whole lines under an operator.
_LINEWISE = frozenset("jkG")
#: Motions whose last character belongs to the range an operator acts on.
_INCLUSIVE = frozenset({"e", "$", "cw"})
#: Named keys normal mode reads as a command (``ctrl+r`` is redo, as in vim).
_NAMED_KEYS = {"backspace": "h", "delete": "x", "ctrl+r": _REDO}
#: Shorthands: ``x`` is ``dl``, ``X`` is ``dh``, ``D`` is ``d$``, ``C`` is ``c$``.
_SHORTHANDS = {"x": ("d", "l"), "X": ("d", "h"), "D": ("d", "$"), "C": ("c", "$")}


def _kind(character: str) -> int:
    """0 blank, 1 punctuation, 2 word character (vim's three classes)."""
    if character.isspace():
        return 0
    return 2 if character.isalnum() or character == "_" else 1


def next_word_start(text: str, index: int) -> int:
    """Where ``w`` lands from ``index`` in ``text``: the next word's start, an empty line,
    or ``len(text)``."""
    end = len(text)
    if index >= end:
        return end
    kind = _kind(text[index])
    if kind:
        while index < end and _kind(text[index]) == kind:
            index += 1
    while index < end and _kind(text[index]) == 0:
        if text[index] == "\n" and index + 1 < end and text[index + 1] == "\n":
            return index + 1  # an empty line is a word of its own
        index += 1
    return index


def word_end(text: str, index: int) -> int:
    """Where ``e`` lands from ``index``: the last character of this word or the next one."""
    end = len(text)
    index += 1
    while index < end and _kind(text[index]) == 0:
        index += 1
    if index >= end:
        return max(end - 1, 0)
    kind = _kind(text[index])
    while index + 1 < end and _kind(text[index + 1]) == kind:
        index += 1
    return index


def previous_word_start(text: str, index: int) -> int:
    """Where ``b`` lands from ``index``: the start of this word or the one before, or an
    empty line."""
    index -= 1
    while index > 0 and _kind(text[index]) == 0:
        if text[index] == "\n" and text[index - 1] == "\n":
            return index  # an empty line
        index -= 1
    if index <= 0:
        return 0
    kind = _kind(text[index])
    while index > 0 and _kind(text[index - 1]) == kind:
        index -= 1
    return index


def _escaped_character(key: str, character: str | None) -> str | None:
    """The character of an ``alt+`` key, else ``None``.

    A terminal sends alt+x as ESC x, so Textual reads an escape followed within its
    ``ESCDELAY`` (100 ms by default) by a letter as alt+that letter: under vim keys it is
    taken as the escape and the letter. Not covered: keys the app binds (alt+h, alt+i,
    alt+e, alt+d, alt+p, alt+s) reach the app first, and Textual reads ESC b and ESC f as
    ctrl+left and ctrl+right and ESC followed by a digit or a sign as another character.
    """
    if key.startswith("alt+") and character is not None and len(character) == 1:
        return character if character.isprintable() else None
    return None


def index_of(lines: list[str], location: Location) -> int:
    """The offset of ``location`` in the lines joined by newlines."""
    row, column = location
    return sum(len(line) + 1 for line in lines[:row]) + column


def location_of(lines: list[str], index: int) -> Location:
    """The location of offset ``index`` in the lines joined by newlines (:func:`index_of`'s
    inverse; past the end is the end)."""
    for row, line in enumerate(lines):
        if index <= len(line):
            return row, index
        index -= len(line) + 1
    return len(lines) - 1, len(lines[-1]) if lines else 0


def first_non_blank(line: str) -> int:
    """The column of the first non-blank character of ``line`` (its length when blank)."""
    return len(line) - len(line.lstrip())


@dataclass(frozen=True)
class Register:
    """What the last delete or yank took: its ``text``, and whether it was whole lines."""

    text: str = ""
    linewise: bool = False


class VimKeys:
    """Normal and insert mode over one TextArea (see the module docstring for the contract)."""

    def __init__(
        self,
        area: TextArea,
        *,
        on_mode: Callable[[Mode], None] | None = None,
        newline_keys: Iterable[str] = (),
    ) -> None:
        self.area = area
        self.mode = Mode.INSERT
        self.register = Register()
        """The text ``p`` and ``P`` put (filled by every delete and yank)."""
        self._on_mode = on_mode
        self._newline_keys = frozenset(newline_keys)
        self._count = ""
        self._operator: str | None = None
        self._operator_count = 1
        self._prefix: str | None = None  # "g" (for gg) or "r" (waiting for its character)

    # --- modes ------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to insert mode with nothing pending (after a submission, or vim keys off)."""
        self._clear_pending()
        self._set_mode(Mode.INSERT)

    def _set_mode(self, mode: Mode) -> None:
        if mode is self.mode:
            return
        self.mode = mode
        self.area.history.checkpoint()  # what was typed is one undo step, the next another
        if self._on_mode is not None:
            self._on_mode(mode)

    def _to_normal(self) -> None:
        row, column = self.area.cursor_location
        if column > 0:
            self.area.move_cursor((row, column - 1))
        self._set_mode(Mode.NORMAL)

    def _insert_at(self, location: Location) -> None:
        self.area.move_cursor(location)
        self._set_mode(Mode.INSERT)

    @property
    def pending(self) -> bool:
        """Whether a count, operator or two-key command is half typed."""
        return bool(self._count or self._operator or self._prefix)

    def _clear_pending(self) -> None:
        self._count = ""
        self._operator = None
        self._operator_count = 1
        self._prefix = None

    # --- keys -------------------------------------------------------------------------

    def handle(self, key: str, character: str | None) -> str | None:
        """Use ``key`` (its ``character`` when printable); ``None`` when it was used, else
        the key the owner should handle as usual."""
        escaped = _escaped_character(key, character)
        if self.mode is Mode.INSERT:
            if key == "escape":
                self._to_normal()
                return None
            if escaped is None:
                return key
            self._to_normal()  # esc and a key typed fast: handled as the two keys
        if escaped is not None:
            key = character = escaped
        if key == "escape":
            if self.pending:
                self._clear_pending()
                return None
            return key
        typed = character if character is not None and character.isprintable() else None
        if typed is None:
            if key in self._newline_keys:
                self._clear_pending()
                return None
            typed = _NAMED_KEYS.get(key)
            if typed is None:
                return key
        routed = self._normal(typed)
        self.settle()
        return routed

    def _normal(self, typed: str) -> str | None:
        prefix, self._prefix = self._prefix, None
        if prefix == "r":
            self._replace_characters(typed, self._take_count())
            return None
        if prefix == "g":
            if typed == "g":
                return self._motion("g")
            self._clear_pending()
            return None
        if typed in "0123456789" and (typed != "0" or self._count):
            self._count = (self._count + typed)[: len(str(MAX_COUNT))]
            return None
        if typed in ("g", "r"):
            self._prefix = typed
            return None
        if self._operator is not None:
            if typed == self._operator:
                operator, self._operator = self._operator, None
                self._operate_lines(operator, self._take_count())
            elif typed in MOTIONS:
                return self._motion(typed)
            else:
                self._clear_pending()
            return None
        if typed in MOTIONS:
            return self._motion(typed)
        if typed in OPERATORS:
            self._operator = typed
            self._operator_count = self._take_count()
            return None
        if typed in _SHORTHANDS:
            operator, motion = _SHORTHANDS[typed]
            self._operator = operator
            return self._motion(motion)
        count = self._take_count()
        self._command(typed, count)
        return None

    def _take_count(self) -> int:
        """The count typed (times the operator's), 1 when none; the pending count is cleared."""
        count = min(int(self._count or 1) * self._operator_count, MAX_COUNT)
        self._count = ""
        self._operator_count = 1
        return count

    def _command(self, typed: str, count: int) -> None:
        area = self.area
        row, column = area.cursor_location
        line = area.document[row]
        if typed == "i":
            self._insert_at((row, column))
        elif typed == "a":
            self._insert_at((row, min(column + 1, len(line))))
        elif typed == "I":
            self._insert_at((row, first_non_blank(line)))
        elif typed == "A":
            self._insert_at((row, len(line)))
        elif typed == "o":
            self._edit("\n", (row, len(line)), (row, len(line)))
            self._insert_at((row + 1, 0))
        elif typed == "O":
            self._edit("\n", (row, 0), (row, 0))
            self._insert_at((row, 0))
        elif typed in ("p", "P"):
            self._put(after=typed == "p", count=count)
        elif typed in ("u", _REDO):
            self._undo(redo=typed == _REDO, count=count)

    # --- motions ----------------------------------------------------------------------

    def _motion(self, motion: str) -> str | None:
        """Move by ``motion``, or apply the pending operator over it."""
        explicit = bool(self._count) or self._operator_count > 1
        count = self._take_count()
        operator, self._operator = self._operator, None
        if operator is None and motion in "jk" and not explicit:
            row = self.area.cursor_location[0]
            if motion == "k" and row == 0:
                return "up"
            if motion == "j" and row == self.area.document.line_count - 1:
                return "down"
        if operator is None and motion in "jk":
            step = self.area.action_cursor_down if motion == "j" else self.area.action_cursor_up
            for _ in range(count):
                before = self.area.cursor_location
                step()
                if self.area.cursor_location == before:
                    break
            return None
        if operator == "c" and motion == "w" and self._on_non_blank():
            motion = "cw"  # vim: cw on a word changes to its end (this word's, on its last letter)
        target = self._target(motion, count, explicit, operator is not None)
        if operator is not None and motion in "jk" and target[0] == self.area.cursor_location[0]:
            return None  # vim: dj on the last line (dk on the first) does nothing
        if operator is None:
            self.area.move_cursor(target)
        elif motion in _LINEWISE or motion == "g":
            self._operate_lines(operator, 1, to_row=target[0])
        else:
            self._operate_range(operator, motion, target)
        return None

    def _on_non_blank(self) -> bool:
        row, column = self.area.cursor_location
        line = self.area.document[row]
        return column < len(line) and not line[column].isspace()

    def _target(self, motion: str, count: int, explicit: bool, operating: bool) -> Location:
        """Where ``motion`` taken ``count`` times leads from the cursor."""
        document = self.area.document
        row, column = self.area.cursor_location
        line = document[row]
        last_row = document.line_count - 1
        if motion == "h":
            return row, max(column - count, 0)
        if motion == "l":
            limit = len(line) if operating else max(len(line) - 1, 0)
            return row, min(column + count, limit)
        if motion in "jk":
            return min(max(row + (count if motion == "j" else -count), 0), last_row), column
        if motion == "0":
            return row, 0
        if motion == "^":
            return row, first_non_blank(line)
        if motion == "$":
            end_row = min(row + count - 1, last_row)
            return end_row, max(len(document[end_row]) - 1, 0)
        if motion in ("g", "G"):
            if explicit:
                goal = min(max(count - 1, 0), last_row)
            else:
                goal = 0 if motion == "g" else last_row
            return goal, first_non_blank(document[goal])
        lines = document.lines
        text = "\n".join(lines)
        index = index_of(lines, (row, column))
        if motion == "cw":
            index, count, motion = word_end(text, index - 1), count - 1, "e"
        step = {"w": next_word_start, "b": previous_word_start, "e": word_end}[motion]
        for _ in range(count):
            moved = step(text, index)
            if moved == index:
                break
            index = moved
        return location_of(lines, index)

    def settle(self) -> None:
        """In normal mode, put the cursor back on a character when it is past a line's end
        (after a command, or after the owner moved it: a history entry)."""
        if self.mode is not Mode.NORMAL:
            return
        row, column = self.area.cursor_location
        length = len(self.area.document[row])
        if length and column >= length:
            self.area.move_cursor((row, length - 1), record_width=False)

    # --- edits ------------------------------------------------------------------------

    def _edit(self, text: str, start: Location, end: Location) -> None:
        """One edit through the TextArea, its own undo step."""
        self.area.history.checkpoint()
        self.area.replace(text, start, end, maintain_selection_offset=False)

    def _operate_range(self, operator: str, motion: str, target: Location) -> None:
        document = self.area.document
        start, end = sorted((self.area.cursor_location, target))
        if motion in _INCLUSIVE:
            end = (end[0], min(end[1] + 1, len(document[end[0]])))
        elif motion == "w" and end[0] > start[0]:
            # vim: the last word moved over ends the range, not the next line's first word
            end = (end[0] - 1, len(document[end[0] - 1]))
        if start == end:
            self.area.move_cursor(start)
            if operator == "c":
                self._set_mode(Mode.INSERT)
            return
        self.register = Register(self.area.get_text_range(start, end))
        if operator != "y":
            self._edit("", start, end)
        self.area.move_cursor(start)
        if operator == "c":
            self._set_mode(Mode.INSERT)

    def _operate_lines(self, operator: str, count: int, *, to_row: int | None = None) -> None:
        """``operator`` over whole lines: ``count`` lines from the cursor's (``dd``, ``3yy``),
        or those from the cursor's to ``to_row`` (``dj``, ``dG``)."""
        document = self.area.document
        row, column = self.area.cursor_location
        last_row = document.line_count - 1
        if to_row is None:
            first, last = row, min(row + count - 1, last_row)
        else:
            first, last = sorted((row, to_row))
        lines = document[first : last + 1]
        self.register = Register("\n".join(lines) + "\n", linewise=True)
        if operator == "y":
            self.area.move_cursor((first, column) if to_row is not None else (row, column))
            return
        if operator == "c":
            self._edit("", (first, 0), (last, len(document[last])))
            self._insert_at((first, 0))
            return
        if last < last_row:
            self._edit("", (first, 0), (last + 1, 0))
        elif first > 0:
            self._edit("", (first - 1, len(document[first - 1])), (last, len(document[last])))
        else:
            self._edit("", (0, 0), (last, len(document[last])))
        landing = min(first, self.area.document.line_count - 1)
        self.area.move_cursor((landing, first_non_blank(self.area.document[landing])))

    def _put(self, *, after: bool, count: int) -> None:
        register = self.register
        if not register.text:
            return
        count = max(1, min(count, MAX_PUT_CHARS // len(register.text)))
        document = self.area.document
        row, column = self.area.cursor_location
        line = document[row]
        if register.linewise:
            block = register.text * count
            if after and row == document.line_count - 1:
                self._edit("\n" + block[:-1], (row, len(line)), (row, len(line)))
            else:
                at = (row + 1, 0) if after else (row, 0)
                self._edit(block, at, at)
            landing = row + 1 if after else row
            self.area.move_cursor((landing, first_non_blank(self.area.document[landing])))
            return
        block = register.text * count
        at = (row, min(column + 1, len(line))) if after and line else (row, column)
        self._edit(block, at, at)
        lines = self.area.document.lines
        self.area.move_cursor(location_of(lines, index_of(lines, at) + len(block) - 1))

    def _replace_characters(self, character: str, count: int) -> None:
        row, column = self.area.cursor_location
        if column + count > len(self.area.document[row]):
            return  # vim: r needs as many characters as its count
        self._edit(character * count, (row, column), (row, column + count))
        self.area.move_cursor((row, column + count - 1))

    def _undo(self, *, redo: bool, count: int = 1) -> None:
        self._clear_pending()
        for _ in range(count):
            if redo:
                self.area.redo()
            else:
                self.area.undo()
