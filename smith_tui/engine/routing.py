"""Who handles a message: ``@name`` hand-offs and the complex-request hint.

``@name`` at the very start of a prompt hands it to that sub-agent (a built-in child:
worker/Niobe, explorer/Link, or a role from an agent file) as a dispatch from the
active role. A leading ``@name`` is always the sub-agent when such a role exists, even
if a file of that name exists too; ``@./name`` attaches the file. Anywhere else in a
prompt ``@path`` attaches files as before.

:func:`looks_complex` is a keyword and size heuristic (English and Chinese) for a
request with many steps over several parts of the code, which the orchestrator may
handle better than the direct role: the runtime then shows a one-line hint, or with
``routing.auto: true`` switches to the orchestrator. It never switches by default.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from smith_tui.engine.roles import RoleSpec, UnknownRoleError, resolve_role

_HANDOFF = re.compile(r"^@([A-Za-z0-9][A-Za-z0-9_-]*)(?=\s|$)\s*(.*)\Z", re.DOTALL)

HINT = (
    "this request looks like many steps over several parts of the code: the orchestrator "
    "(Tank) may suit it better — /role orchestrator (routing.auto: true switches by itself)"
)


@dataclass(frozen=True)
class Handoff:
    """A prompt handed to a sub-agent: the role and what it is asked to do."""

    role: RoleSpec
    task: str


def handoff(prompt: str) -> Handoff | None:
    """The sub-agent ``prompt`` is handed to (``@name rest``), or ``None``."""
    match = _HANDOFF.match(prompt.strip())
    if match is None:
        return None
    try:
        role = resolve_role(match.group(1))
    except UnknownRoleError:
        return None
    if role.user_facing:
        return None  # @smith / @tank are not sub-agents (/role switches between them)
    return Handoff(role, match.group(2).strip())


# -- the complex-request heuristic ---------------------------------------------------------


@dataclass(frozen=True)
class _Patterns:
    """The heuristic's word lists, compiled (about 2 ms): only a long or many-line prompt
    is counted, so a short one never compiles them."""

    en_steps: re.Pattern[str]
    en_actions: re.Pattern[str]
    en_areas: re.Pattern[str]
    zh_steps: re.Pattern[str]
    zh_actions: re.Pattern[str]
    zh_areas: re.Pattern[str]
    list_item: re.Pattern[str]


@functools.cache
def _patterns() -> _Patterns:
    return _Patterns(
        en_steps=re.compile(
            r"\b(then|after that|afterwards|next|finally|first|second|third|also|as well as|"
            r"and also|once that|step \d+)\b",
            re.IGNORECASE,
        ),
        en_actions=re.compile(
            r"\b(implement|refactor|migrate|add|update|fix|rewrite|rename|design|integrate|"
            r"write tests?|test|document|remove|replace|port|split|move|build|set up|configure)\b",
            re.IGNORECASE,
        ),
        en_areas=re.compile(
            r"\b(frontend|front-end|backend|back-end|database|db|schema|api|server|client|ui|cli|"
            r"tests?|docs?|documentation|ci|pipeline|config(?:uration)?|auth(?:entication)?|"
            r"migrations?|models?|views?|routes?|endpoints?|modules?|services?|packages?)\b",
            re.IGNORECASE,
        ),
        zh_steps=re.compile(
            r"然后|接着|之后|并且|同时|最后|首先|其次|另外|以及|再|还要|第[一二三四五六七八九十\d]+步",
        ),
        zh_actions=re.compile(
            r"实现|重构|迁移|添加|增加|修改|修复|编写|更新|设计|集成|删除|替换|拆分|移动|配置|测试",
        ),
        zh_areas=re.compile(
            r"前端|后端|数据库|接口|测试|文档|配置|界面|服务端|客户端|模块|部署|权限|认证|模型",
        ),
        list_item=re.compile(
            r"^\s*(?:\d+[.)、]|[-*•])\s+",
            re.MULTILINE,
        ),
    )


_CJK = re.compile(r"[\u4e00-\u9fff]")


def _count(pattern: re.Pattern[str], text: str, *, distinct: bool = False) -> int:
    found = [m.group(0).lower() for m in pattern.finditer(text)]
    return len(set(found)) if distinct else len(found)


def looks_complex(prompt: str) -> bool:
    """Whether ``prompt`` reads like many steps over several areas of the code.

    Size (words, or CJK characters) and three counts decide: sequencing words and list
    items (steps), action verbs, and distinct areas of a code base. A short one-line
    request is never complex.
    """
    text = prompt.strip()
    words = len(re.findall(r"[A-Za-z0-9_'-]+", text))
    cjk = len(_CJK.findall(text))
    size = words + cjk // 2
    if size < 25 and "\n" not in text:
        return False
    p = _patterns()
    steps = _count(p.en_steps, text) + _count(p.zh_steps, text) + len(p.list_item.findall(text))
    actions = _count(p.en_actions, text, distinct=True) + _count(p.zh_actions, text, distinct=True)
    areas = _count(p.en_areas, text, distinct=True) + _count(p.zh_areas, text, distinct=True)
    if size < 20:
        return False
    return (steps >= 2 and actions >= 2 and areas >= 2) or (steps >= 4 and actions >= 3)
