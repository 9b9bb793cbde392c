"""What the security suite records: each attack, its section, and whether the defence held.

A test that tries an attack is marked ``@pytest.mark.attack(SECTION, "what it tries")``;
its control (the same attack without the defence, which must succeed) is marked
``@pytest.mark.control(SECTION, "what it shows")``. When ``SMITH_SECURITY_REPORT`` names
a file, the session writes every marked test's outcome there (one JSON document), and
``tests/security/report.py`` renders those files as ``docs/SECURITY.md``.
"""

from __future__ import annotations

import json
import os
import platform
import pwd
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

SECTIONS: dict[str, str] = {
    "sandbox": "The sandbox (tools/sandbox.py)",
    "rules": "Permission rules read commands as bash does (tools/permission_policy.py)",
    "files": "File tools without races (read, edit, write, checkpoint restore)",
    "terminal": "The terminal shows text, never commands",
    "input": "Bad input ends with a tool error, never a dead turn",
    "hooks": "A repository's hooks run only after the user trusted them",
}
"""The sections of issue 20, by the name tests use in their markers."""

REPORT_PATH = os.environ.get("SMITH_SECURITY_REPORT", "")


@dataclass
class Row:
    """One marked test's outcome."""

    kind: str
    """``attack`` or ``control``."""
    section: str
    what: str
    test: str
    outcome: str
    """``passed`` (the defence held / the control showed the attack works), ``failed``, ``skipped``."""
    detail: str = ""


@dataclass
class Results:
    """The rows of one run and the facts of the machine it ran on."""

    user: str = field(default_factory=lambda: pwd.getpwuid(os.geteuid()).pw_name)
    uid: int = field(default_factory=os.geteuid)
    python: str = field(default_factory=lambda: sys.version.split()[0])
    kernel: str = field(default_factory=platform.release)
    started: float = field(default_factory=time.time)
    rows: list[Row] = field(default_factory=list)


RESULTS = Results()


def write_report(path: str) -> None:
    """Write the run's rows to ``path`` as JSON."""
    Path(path).write_text(json.dumps(asdict(RESULTS), indent=1), encoding="utf-8")
