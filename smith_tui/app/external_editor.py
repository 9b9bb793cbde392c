"""Edit a piece of text in the user's own editor (``$VISUAL``, else ``$EDITOR``).

The text goes to a private file (mode 0600 in a fresh 0700 folder), the Textual app hands
the terminal over (:meth:`App.suspend`) while the editor runs, and what was saved is read
back, bounded in size. The editor command is split like a shell would (``code --wait``)
but never run through one. Every failure comes back as a message saying what went wrong,
never as an exception: no editor set, one that cannot be started, a non-zero exit, a file
that was removed, replaced by something else, too big or not UTF-8.

Used for the prompt (``ctrl+g``), a ``/config`` value and the plan screen.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
from collections.abc import Coroutine, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

#: The most text read back from the editor's file (a prompt or a plan, not a data set).
MAX_BYTES = 1024 * 1024

#: A suffix the temporary file may have (it picks the editor's syntax); others become .txt.
_SUFFIX = re.compile(r"\.[A-Za-z0-9_-]{1,16}")

NO_EDITOR = "No editor is set: set $VISUAL or $EDITOR (for example export EDITOR=nano)"


@runtime_checkable
class EditsExternally(Protocol):
    """A screen with a value the external editor can edit (the app's editor key asks it)."""

    def edit_externally(self) -> Coroutine[Any, Any, None]:
        """Open the value in the user's editor and take back what is saved."""
        ...


@dataclass(frozen=True)
class ExternalEdit:
    """What an edit gave: the saved ``text``, or an ``error`` saying what failed."""

    text: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the editor exited cleanly and its file was read back."""
        return self.text is not None


def editor_command(env: Mapping[str, str]) -> list[str] | str:
    """The editor's argv from ``$VISUAL`` then ``$EDITOR``, or a message saying what is
    wrong (none set, or a value that cannot be split)."""
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if not value:
            continue
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            return f"${name} ({value!r}) cannot be read as a command: {exc}"
        if argv:
            return argv
    return NO_EDITOR


async def edit_externally(app: Any, text: str, *, suffix: str = ".md") -> ExternalEdit:
    """Open ``text`` in the user's editor with the app suspended; the saved text or why not.

    ``app`` is the running Textual app. In headless mode (tests, no terminal of its own)
    there is nothing to hand over and the editor runs without suspending. The trailing
    newline an editor adds on save is dropped when ``text`` had none.
    """
    folder = Path(tempfile.mkdtemp(prefix="smith-edit-"))  # 0700, a fresh name
    try:
        path = folder / f"edit{suffix if _SUFFIX.fullmatch(suffix) else '.txt'}"
        _write_private(path, text)
        failed = await open_in_editor(app, path)
        if failed is not None:
            return ExternalEdit(error=f"{failed}: nothing was changed.")
        saved = _read_back(path)
        if isinstance(saved, ExternalEdit):
            return saved
        if not text.endswith("\n") and saved.endswith("\n"):
            saved = saved[:-2] if saved.endswith("\r\n") else saved[:-1]
        return ExternalEdit(text=saved)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def open_in_editor(app: Any, path: Path | str, *, fallback: str | None = None) -> str | None:
    """Run the user's editor on the file ``path`` with ``app`` suspended (``/memory open``,
    and :func:`edit_externally`); ``None`` when it exited cleanly, else what failed.

    ``fallback`` is the command used when neither ``$VISUAL`` nor ``$EDITOR`` is set.
    """
    argv = editor_command(os.environ)
    if isinstance(argv, str):
        if fallback is None:
            return argv
        argv = shlex.split(fallback)
    try:
        with _terminal_handed_over(app):
            code = _run(argv, Path(path))
    except _CannotSuspend:
        return (
            "This terminal cannot be handed over to an editor (Textual cannot suspend "
            "the app here, e.g. in a web terminal)"
        )
    except OSError as exc:
        return f"Could not start the editor {argv[0]!r}: {exc.strerror}"
    finally:
        with contextlib.suppress(Exception):
            app.refresh(layout=True)
    if code != 0:
        return f"The editor ({argv[0]}) exited with status {code}"
    return None


class _CannotSuspend(Exception):
    """The app's driver cannot give the terminal away."""


@contextlib.contextmanager
def _terminal_handed_over(app: Any) -> Iterator[None]:
    """Suspend ``app`` around the block (nothing to do when headless)."""
    from textual.app import SuspendNotSupported

    if getattr(app, "is_headless", False):
        yield
        return
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(app.suspend())
        except SuspendNotSupported as exc:
            raise _CannotSuspend from exc
        yield


def _run(argv: list[str], path: Path) -> int:
    """Run the editor on ``path`` (inheriting the terminal) and wait; its exit status.

    The wait blocks the event loop on purpose, as Textual's ``suspend`` expects: while
    suspended its output thread is stopped, and a loop that kept painting (a streaming
    turn, the cursor's blink) would fill that thread's bounded queue and hang the app.
    A running turn goes on when the editor exits. While the terminal is in the shell's
    mode a ctrl+c reaches Smith too: it is ignored here (the editor still gets it).
    """
    previous = signal.getsignal(signal.SIGINT)
    swap = threading.current_thread() is threading.main_thread() and previous is not None
    if swap:
        # A Python handler, not SIG_IGN: the editor starts with the default again.
        signal.signal(signal.SIGINT, _ignore_interrupt)
    try:
        return subprocess.run([*argv, str(path)], check=False).returncode
    finally:
        if swap:
            signal.signal(signal.SIGINT, previous)


def _ignore_interrupt(signum: int, frame: object) -> None:
    """SIGINT while the editor runs: the editor's to handle."""


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _read_back(path: Path) -> str | ExternalEdit:
    """The file's text, or an :class:`ExternalEdit` error (gone, not a file, too big…)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return ExternalEdit(error="The editor removed the file: nothing was changed.")
    except OSError as exc:
        return ExternalEdit(error=f"Could not read the edited file back: {exc.strerror}.")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return ExternalEdit(
                error="The edited file is no longer a plain file: nothing was changed."
            )
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        return ExternalEdit(
            error=f"The edited text is over {MAX_BYTES // 1024} KiB: nothing was changed."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ExternalEdit(error="The edited file is not UTF-8 text: nothing was changed.")


# -- the widgets it edits ---------------------------------------------------------------------


async def edit_text_area(app: Any, area: Any, *, suffix: str = ".md") -> bool:
    """Edit a ``TextArea``'s text (the prompt) in the editor; put the saved text back.

    A failure is a notice and leaves the text as it was. True when the text was replaced.
    """
    result = await edit_externally(app, area.text, suffix=suffix)
    if result.text is None:
        _say_failed(app, result)
        return False
    area.load_text(result.text)
    area.move_cursor(area.document.end)
    area.focus()
    return True


async def edit_input(app: Any, box: Any, *, suffix: str = ".txt") -> bool:
    """Edit a one-line ``Input``'s value (a ``/config`` value) in the editor.

    The box holds one line: the saved lines are joined with single spaces, their indents
    dropped (JSON reads the same; a text value that needs line breaks belongs in the
    config file).
    """
    result = await edit_externally(app, box.value, suffix=suffix)
    if result.text is None:
        _say_failed(app, result)
        return False
    box.value = " ".join(line.strip() for line in result.text.splitlines() if line.strip())
    box.cursor_position = len(box.value)
    box.focus()
    return True


def _say_failed(app: Any, result: ExternalEdit) -> None:
    app.notify(result.error or "The editor failed.", title="External editor", severity="error")
