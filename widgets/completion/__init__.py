"""Prompt completion: candidate rules, project file listing and the dropdown menu."""

from smith_tui.widgets.completion.candidates import (
    Candidate,
    Completer,
    Completion,
    CompletionSources,
    rank,
)

__all__ = [
    "Candidate",
    "Completer",
    "Completion",
    "CompletionSources",
    "rank",
]
