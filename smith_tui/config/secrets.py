"""The API keys smith holds: kept out of the programs it starts and out of what it keeps.

Two environment variables hold secrets: the one named by ``llm_config.api_key_env``
(default ``LLM_API_KEY``) and the one named by ``services.tool.web_search.api_key_env``
(default ``LINKUP_API_KEY``).

* :func:`scrubbed_environ` is the environment for every child process (bash, rg, git):
  ours without those variables, so a command cannot print or send them.
* :func:`redact` and :class:`StreamRedactor` replace their *values* with ``***`` in text
  that will be stored, sent to the model or written out (tool results, live tool output,
  exports). A file or server reply that happens to contain the key is caught this way.

The two default names are always treated as secret. A name the configuration gives instead
is remembered for the rest of the process (:func:`note_secret_variables`, called when a
configuration is loaded and for every tool call), so helpers that have no configuration at
hand (``git_env``, ``rg_env``) scrub it as well.

Values shorter than :data:`MIN_SECRET_CHARS` characters are scrubbed from child
environments but not redacted from text: real API keys are far longer, and replacing a
short value such as ``test`` wherever it occurs would mangle ordinary output.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from smith_tui.config.defaults import DEFAULT_API_KEY_ENV

if TYPE_CHECKING:  # the schema loads with a configuration, not with every child process helper
    from smith_tui.config.schema import SmithConfig

DEFAULT_WEB_SEARCH_KEY_ENV = "LINKUP_API_KEY"
"""Environment variable read for the web-search key unless the config names another."""

MIN_SECRET_CHARS = 8
"""Values shorter than this are not redacted from text (see the module docstring)."""

REDACTED = "***"
"""What a secret value is replaced with."""

_known_variables: set[str] = {DEFAULT_API_KEY_ENV, DEFAULT_WEB_SEARCH_KEY_ENV}


def note_secret_variables(config: SmithConfig | None) -> frozenset[str]:
    """Remember the key variables ``config`` names; return every secret variable known now."""
    if config is not None:
        for name in (config.llm_config.api_key_env, config.services.tool.web_search.api_key_env):
            if name is not None and name.strip():
                _known_variables.add(name.strip())
    return frozenset(_known_variables)


def secret_variables() -> frozenset[str]:
    """The names of the environment variables treated as secret so far."""
    return frozenset(_known_variables)


def scrubbed_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: this process's environment) without the secret variables."""
    source = os.environ if base is None else base
    hidden = _known_variables
    return {key: value for key, value in source.items() if key not in hidden}


def secret_values(
    config: SmithConfig | None = None, environ: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """The values of the secret variables that are set, longest first, ready for :func:`redact`.

    ``config`` adds the names it configures (see :func:`note_secret_variables`); values
    shorter than :data:`MIN_SECRET_CHARS` are left out.
    """
    source = os.environ if environ is None else environ
    found = set()
    for name in note_secret_variables(config):
        value = source.get(name, "").strip()
        if len(value) >= MIN_SECRET_CHARS:
            found.add(value)
    # Longest first, so a value containing another is replaced whole.
    return tuple(sorted(found, key=lambda value: (-len(value), value)))


def redact(text: str, values: Sequence[str]) -> str:
    """``text`` with every occurrence of each of ``values`` replaced by ``***``."""
    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def redact_data(data: Any, values: Sequence[str]) -> Any:
    """:func:`redact` applied to every string inside nested mappings and sequences.

    Mappings come back as dicts and sequences as lists (what JSON would store anyway).
    """
    if not values:
        return data
    if isinstance(data, str):
        return redact(data, values)
    if isinstance(data, Mapping):
        return {redact_data(key, values): redact_data(item, values) for key, item in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(item, values) for item in data]
    return data


class StreamRedactor:
    """Redacts text that arrives in pieces, then passes it on to ``sink``.

    A value may be split across two pieces, so the end of each piece that could be the
    start of a secret is held back until the next piece (or :meth:`flush`) shows whether
    it is. Ordinary output is held back only when its last characters happen to begin a
    secret, so the live view stays live.
    """

    def __init__(self, values: Iterable[str], sink: Callable[[str], None]) -> None:
        self.values = tuple(values)
        self.sink = sink
        self._pending = ""

    def _held_back(self, text: str) -> int:
        """Length of the longest end of ``text`` that is the beginning of a secret."""
        longest = max((len(value) for value in self.values), default=0)
        for size in range(min(len(text), longest - 1), 0, -1):
            tail = text[-size:]
            if any(value.startswith(tail) for value in self.values):
                return size
        return 0

    def feed(self, text: str) -> None:
        """Take the next piece; send on what is safe to show."""
        if not self.values:
            if text:
                self.sink(text)
            return
        clean = redact(self._pending + text, self.values)
        hold = self._held_back(clean)
        self._pending = clean[len(clean) - hold :] if hold else ""
        ready = clean[: len(clean) - hold]
        if ready:
            self.sink(ready)

    def flush(self) -> None:
        """Send what is still held back (the stream has ended)."""
        pending, self._pending = self._pending, ""
        if pending:
            self.sink(pending)
