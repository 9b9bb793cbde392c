"""Prompt completion: candidate rules, project file listing and the dropdown menu."""

from smith_tui.widgets.completion.candidates import (
    DEFAULT_COMMANDS,
    Candidate,
    Completer,
    Completion,
    CompletionSources,
    rank,
)

__all__ = [
    "DEFAULT_COMMANDS",
    "Candidate",
    "Completer",
    "Completion",
    "CompletionSources",
    "rank",
]
