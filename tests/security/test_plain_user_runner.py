"""The plain run really is another user: the runner's own checks (root only)."""

from __future__ import annotations

import os
import sys

import pytest

from tests.security import plain_user


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can switch to the plain user")
def test_the_plain_run_is_not_root_and_sees_this_checkout(tmp_path: object) -> None:
    account = plain_user.ensure_account()
    assert account.uid != 0
    python = plain_user._interpreter(account)
    done = plain_user.as_user(
        account,
        [python, "-c", "import os, sys; print(os.geteuid(), sys.version_info[:2])"],
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    uid, _, version = done.stdout.strip().partition(" ")
    assert int(uid) == account.uid
    assert version == str(sys.version_info[:2])
