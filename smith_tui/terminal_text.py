"""Outside text made fit for a terminal: control characters shown, never obeyed.

Model text, reasoning, tool output, file names, server messages and MCP results can carry
escape sequences that a terminal would execute: OSC 52 writes the clipboard, OSC 0 sets
the title, APC and DCS strings talk to the terminal, ``ESC[2J`` clears the screen, and a C1
byte such as U+009B starts a sequence without any ESC. :func:`visible` turns every such
character into a visible stand-in before the text is drawn, printed or exported. Smith's
own escapes (the Kitty-graphics rain, OSC 52 for ``/copy``) never pass through it.
:func:`without_controls` is the last line of defence for text no front end showed: it
drops them (a terminal gives them no width, so the layout stays as computed).

It lives at the package root, beside :mod:`smith_tui.cancel`, because every front end
needs it: the widgets and the headless printer in the app, and ``/export`` in the engine.
"""

from __future__ import annotations

import re

#: What is shown for each character a terminal could obey. C0 controls (but tab and
#: newline) become their Control Pictures sign (U+2400 + code, so ESC is ``␛``), DEL is
#: ``␡``, C1 controls are written out as ``\x9b`` (they have no picture of their own), and
#: a lone surrogate (which cannot be encoded, or comes out as a raw byte under
#: ``surrogateescape``) is U+FFFD. A carriage return before a newline is a line end and
#: goes; a lone one (it would move the cursor back and let later text cover the line)
#: shows as ``␍``.
_SHOWN: dict[str, str] = {
    **{chr(code): chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\t\n"},
    "\x7f": "\u2421",
    **{chr(code): f"\\x{code:02x}" for code in range(0x80, 0xA0)},
    **{chr(code): "\ufffd" for code in range(0xD800, 0xE000)},
    "\r\n": "\n",
}

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
# The scan above is a plain character class: twice as fast as one that also looks for "\r\n".
_REPLACE = re.compile("\r\n|" + _UNSAFE.pattern)


def _shown(match: re.Match[str]) -> str:
    return _SHOWN[match.group()]


def visible(text: str) -> str:
    """``text`` with every control character shown instead of obeyed.

    Keeps newlines and tabs; ``\\r\\n`` becomes ``\\n``. Text without control characters
    (nearly all of it) is returned as it is, after one scan.
    """
    if _UNSAFE.search(text) is None:
        return text
    return _REPLACE.sub(_shown, text)


def has_controls(text: str) -> bool:
    """Whether ``text`` has a character :func:`visible` would change."""
    return _UNSAFE.search(text) is not None


def _dropped(match: re.Match[str]) -> str:
    return "\ufffd" if match.group() >= "\ud800" else ""


def without_controls(text: str) -> str:
    """``text`` without the control characters :func:`visible` would show (tab and newline
    stay; a lone surrogate becomes U+FFFD, which is as wide)."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_dropped, text)
