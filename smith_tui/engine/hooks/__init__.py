"""Hooks: the user's programs run at points of a session, with Claude Code's contract.

``service`` decides which hooks run and what they said, ``runner`` runs one command,
``verdict`` reads its answer, ``project`` reads a repository's ``.smith/settings.json``
and ``trust`` keeps the user's answers about it (README, Hooks).
"""

from smith_tui.engine.hooks.hook_set import Asker, HookAnswer, Hooks, tool_response
from smith_tui.engine.hooks.project import ProjectHooks, read_project_hooks
from smith_tui.engine.hooks.trust import TrustStore, default_trust_path

__all__ = [
    "Asker",
    "HookAnswer",
    "Hooks",
    "ProjectHooks",
    "TrustStore",
    "default_trust_path",
    "read_project_hooks",
    "tool_response",
]
