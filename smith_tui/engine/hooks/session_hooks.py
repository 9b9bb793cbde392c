"""The hooks a runtime's session uses: the user's, plus the repository's once trusted.

:class:`SessionHooks` reads the repository's ``.smith/settings.json`` (``project.py``),
looks its content up in the user's trust answers (``trust.py``) and builds the
:class:`~smith_tui.engine.hooks.hook_set.Hooks` the turns use. A front end that can ask
(the TUI) calls :meth:`SessionHooks.question` before the first turn and records the
answer with :meth:`SessionHooks.answer`; one that cannot (``smith -p``) shows
:meth:`SessionHooks.warnings` and the project's hooks are skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from smith_tui.config.hooks import HookEntry
from smith_tui.engine import events as ev
from smith_tui.engine.hooks.hook_set import Hooks
from smith_tui.engine.hooks.project import ProjectHooks, read_project_hooks
from smith_tui.engine.hooks.trust import TrustStore


class SessionHooks:
    """Builds a session's :class:`Hooks` and keeps the trust question of its repository."""

    def __init__(
        self,
        *,
        session_id: str,
        emit: Callable[[ev.Event], None],
        trust: TrustStore,
        user_hooks: Callable[[], Mapping[Any, Sequence[HookEntry]]],
        permission_mode: Callable[[], str] | None = None,
        notify_after_s: Callable[[], float] | None = None,
    ) -> None:
        self.session_id = session_id
        self.emit = emit
        self.trust = trust
        self.user_hooks = user_hooks
        self.permission_mode = permission_mode
        self.notify_after_s = notify_after_s
        """Turns that ran longer than this many seconds notify when they end
        (``notifications.after_s``); ``None``: they do not."""
        self._turn_started: dict[str, float] = {}
        self._project: ProjectHooks | None = None
        self._root: Path | None = None
        self._read = False
        self._hooks: Hooks | None = None
        self._key: Any = None

    def project(self, root: Path | None) -> ProjectHooks | None:
        """``root``'s settings file (read again when the root changes or after :meth:`reread`)."""
        if not self._read or root != self._root:
            self._root, self._read = root, True
            self._project = read_project_hooks(root)
        return self._project

    def reread(self) -> None:
        """Read the settings file again at the next use (it may have changed)."""
        self._read = False

    def question(self, root: Path | None) -> ProjectHooks | None:
        """The repository's hooks when the user has not answered about this content yet."""
        project = self.project(root)
        if project is None or project.problem or not project.hooks:
            return None
        if self.trust.answer(project.root, project.digest) != "unknown":
            return None
        return project

    def answer(self, project: ProjectHooks, trusted: bool) -> None:
        """Record the user's answer about ``project`` (exactly its content)."""
        self.trust.record(project.root, project.digest, trusted)
        self._key = None

    def trusted(self, root: Path | None) -> ProjectHooks | None:
        """The repository's hooks when the user trusted exactly this content, else ``None``."""
        project = self.project(root)
        if project is None or project.problem or not project.hooks:
            return None
        if self.trust.answer(project.root, project.digest) != "trusted":
            return None
        return project

    def warnings(self, root: Path | None) -> list[str]:
        """Why the repository's hooks will not run (for a front end that cannot ask)."""
        project = self.project(root)
        if project is None:
            return []
        if project.problem:
            return [f"{project.path}: {project.problem}"]
        answer = self.trust.answer(project.root, project.digest)
        if answer == "trusted":
            return []
        how = "you declined them" if answer == "refused" else "this repository is not trusted"
        return [
            f"{project.path} asks to run {len(project.commands())} hook command(s); "
            f"skipped: {how} (open smith here in the terminal once to review and trust them)"
        ]

    def hooks(self, root: Path | None, cwd: Path) -> Hooks | None:
        """The hooks for a turn in ``root`` (``None`` when there are none at all)."""
        user = self.user_hooks()
        project = self.trusted(root)
        key = (id(user), project.digest if project else None, root, cwd)
        if key != self._key or self._hooks is None:
            started = self._hooks._started if self._hooks is not None else False
            self._hooks = Hooks.build(
                user,
                project,
                session_id=self.session_id,
                emit=self.emit,
                cwd=cwd,
                project_dir=root,
                permission_mode=self.permission_mode,
            )
            self._hooks._started = started
            self._key = key
        return self._hooks if self._hooks.hooks else None

    def observe(self, event: ev.Event) -> None:
        """Follow the session's events for the ``Notification`` hooks that are not a
        permission question: a plan waiting for approval, a long turn that ended."""
        hooks = self._hooks
        if event.job_id is not None or hooks is None or not hooks.has("Notification"):
            return
        if isinstance(event, ev.TurnStarted):
            self._turn_started[event.turn_id] = time.monotonic()
        elif isinstance(event, ev.PlanPresented):
            title = str(event.plan.get("title") or "the plan")
            hooks.notify(f"A plan waits for your approval: {title}", "plan_approval")
        elif isinstance(event, ev.TurnFinished):
            started = self._turn_started.pop(event.turn_id, None)
            if started is None or self.notify_after_s is None or event.stop_reason == "cancelled":
                return
            if time.monotonic() - started > self.notify_after_s():
                hooks.notify(f"Smith finished ({event.stop_reason})", "idle_prompt")

    async def session_end(self, reason: str) -> None:
        """``SessionEnd`` on the hooks last built (none: nothing runs)."""
        if self._hooks is not None and self._hooks.hooks:
            await self._hooks.session_end(reason)
