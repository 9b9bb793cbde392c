"""The user's setup as one runtime sees it: its skills and its sub-agents from files.

:class:`SetupCatalog` discovers both lazily (never before the first frame: the runtime
refreshes it off the event loop before a turn, for ``/skills`` and ``/agents``, and once
in the background after the panes are up) and again only when a file was added, removed
or changed (a stat of each candidate file says so). Each problem found is reported once.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smith_tui.engine import roles
from smith_tui.engine.agents import AgentFile, agents_block, discover_agents
from smith_tui.engine.roles import RoleSpec
from smith_tui.engine.setup_files import Origin, SetupProblem, entries, origins, signature
from smith_tui.engine.skills import SKILL_FILE, Skill, discover_skills, skills_block
from smith_tui.llm import ChatMessage, ChatResponse, ToolCall

if TYPE_CHECKING:
    from smith_tui.config.front_matter import MetaCache


@dataclass(frozen=True)
class Setup:
    """What one discovery found."""

    skills: list[Skill] = field(default_factory=list)
    agents: list[AgentFile] = field(default_factory=list)
    problems: list[SetupProblem] = field(default_factory=list)

    def skill(self, name: str) -> Skill | None:
        """The skill named ``name``, or ``None``."""
        return next((s for s in self.skills if s.name == name), None)


def _candidates(
    skill_folders: list[Origin], agent_folders: list[Origin]
) -> list[tuple[Origin, Path]]:
    """Every file whose change would change the setup (present ones only)."""
    found: list[tuple[Origin, Path]] = []
    for origin in skill_folders:
        found.append((origin, origin.folder))
        for entry in entries(origin):
            found.append((origin, Path(entry.path) / SKILL_FILE))
    for origin in agent_folders:
        found.append((origin, origin.folder))
        found += [(origin, Path(e.path)) for e in entries(origin) if e.name.endswith(".md")]
    return found


class SetupCatalog:
    """The skills and file roles of one project and user, kept up to date on demand."""

    def __init__(
        self,
        user_dir: Callable[[], Path | None],
        home: Callable[[], Path | None] = lambda: None,
        cache: MetaCache | None = None,
    ):
        self._user_dir = user_dir
        self._home = home
        self._meta = cache
        self._lock = threading.Lock()
        self._signature: tuple[object, ...] | None = None
        self.setup = Setup()
        self._reported: set[str] = set()

    def refresh(self, root: Path | None) -> list[SetupProblem]:
        """Discover again when something changed under the user's folder or the project
        ``root`` (blocking: run it off the event loop); install the file roles; return the
        problems not reported before."""
        with self._lock:
            user, home = self._user_dir(), self._home()
            skill_folders = origins("skills", root, user, home)
            agent_folders = origins("agents", root, user, home)
            candidates = _candidates(skill_folders, agent_folders)
            key = (str(user), str(home), str(root), signature(candidates))
            if key != self._signature:
                skills, skill_problems = discover_skills(skill_folders, self._meta)
                agents, agent_problems = discover_agents(agent_folders, self._meta)
                if self._meta is not None:
                    self._meta.save()
                self.setup = Setup(skills, agents, skill_problems + agent_problems)
                self._signature = key
                roles.set_file_roles(agent.role for agent in agents)
            fresh = [p for p in self.setup.problems if p.text() not in self._reported]
            self._reported.update(p.text() for p in fresh)
            return fresh

    @property
    def skills(self) -> list[Skill]:
        """The skills found by the latest discovery."""
        return self.setup.skills

    @property
    def agents(self) -> list[AgentFile]:
        """The agent files found by the latest discovery."""
        return self.setup.agents


def setup_blocks(role: RoleSpec, catalog: SetupCatalog | None) -> list[str]:
    """The system prompt's blocks about the setup for ``role``: the skills when it may load
    them, the sub-agents from files when it may dispatch to them."""
    if catalog is None:
        return []
    blocks = []
    if catalog.skills and roles.check_tool(role.name, "skill") == "allow":
        blocks.append(skills_block(catalog.skills))
    targets = [spec for spec in roles.file_roles() if roles.check_dispatch(role.name, spec.name)]
    if targets:
        blocks.append(agents_block(targets))
    return blocks


def handoff_reply(arguments: Mapping[str, Any]) -> ChatResponse:
    """The reply a hand-off turn starts with instead of a model's: one ``dispatch`` call."""
    call = ToolCall(
        id=f"handoff-{secrets.token_hex(4)}",
        name="dispatch",
        arguments=json.dumps(dict(arguments), ensure_ascii=False),
    )
    return ChatResponse(message=ChatMessage(content="", tool_calls=[call]))
