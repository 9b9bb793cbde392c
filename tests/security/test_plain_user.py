"""The security suite holds for a plain user too (run from a root session; see plain_user.py)."""

from __future__ import annotations

import os
import re

import pytest

from tests.security import plain_user, support


@pytest.mark.timeout(900)
@pytest.mark.skipif(os.geteuid() != 0, reason="a root run starts the plain run; this one is it")
@pytest.mark.skipif(bool(os.environ.get(plain_user.MARK_ENV)), reason="already the plain run")
def test_the_security_suite_holds_as_a_plain_user() -> None:
    report = ""
    if support.REPORT_PATH:
        report = re.sub(r"(\.json)?$", ".plain.json", support.REPORT_PATH, count=1)
    run = plain_user.run_as_plain_user(
        ["-q", "-p", "no:randomly", "tests/security"], timeout=840, report=report
    )
    tail = "\n".join(run.output.strip().splitlines()[-40:])
    assert run.returncode == 0, f"as {plain_user.USER} (python {run.python}):\n{tail}"
    passed = re.search(r"(\d+) passed", tail)
    assert passed and int(passed.group(1)) > 0, tail
