"""Fixtures shared by the whole suite: a private HOME and XDG folders for every test, the
scripted LLM server and the recorded streams."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.llm_script import STREAMS_DIR
from tests.support.llm_server import ScriptedLLMServer
from tests.support.pilot import steady_snapshot

#: The per-user folders every test gets of its own (see ``_private_home``).
XDG_FOLDERS = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
}


#: Variables a parallel run's worker has that a serial run has not: ``COLUMNS=80`` and
#: ``LINES=24`` would make every ``smith`` started in a tmux pane draw 80x24.
WORKER_VARIABLES = ("COLUMNS", "LINES")


def _private_env(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in WORKER_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=base))
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Smith Tests\n\temail = tests@smith.invalid\n", encoding="utf-8"
    )
    monkeypatch.setenv("HOME", str(home))
    for variable, folder in XDG_FOLDERS.items():
        monkeypatch.setenv(variable, str(home / folder))


@pytest.fixture(scope="session", autouse=True)
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A private ``HOME`` for what runs before a test's own (module fixtures); see below."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _private_env(tmp_path_factory.getbasetemp(), monkeypatch)
        yield


@pytest.fixture(autouse=True)
def _private_home(
    _session_home: None, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test runs with a ``HOME`` and XDG folders of its own, in the run's temp folder:
    nothing a test (or the ``smith`` it starts) writes lands in the real user's folders
    (e.g. the sandbox's scratch ``/tmp`` under the data folder) or in another test's, so
    tests can run in parallel and in any order. A test that needs other folders sets them.
    The home holds a ``.gitconfig`` naming a test identity: git commits in tests do not
    depend on the machine's user."""
    _private_env(tmp_path_factory.getbasetemp(), monkeypatch)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A started :class:`ScriptedLLMServer` on 127.0.0.1, stopped after the test."""
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def streams_dir() -> Path:
    """The folder of recorded provider streams (env ``SMITH_STREAMS_DIR`` overrides it)."""
    if not STREAMS_DIR.is_dir():
        pytest.fail(
            f"recorded streams folder {STREAMS_DIR} is missing; "
            "set SMITH_STREAMS_DIR to the folder holding the .sse recordings"
        )
    return STREAMS_DIR


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool]) -> Callable[..., bool]:
    """pytest-textual-snapshot's ``snap_compare``, taking every snapshot of a steady screen:
    no blinking cursor, nothing still changing (see ``tests.support.pilot.steady_snapshot``)."""
    return steady_snapshot(snap_compare)


@pytest.fixture(autouse=True)
def _no_file_roles() -> Iterator[None]:
    """Sub-agents from agent files live in the process's role catalog: none leaks into the
    next test."""
    from smith_tui.engine.roles import set_file_roles

    yield
    set_file_roles(())


#: The report files a run writes at its end (docs/SECURITY.md, docs/RELIABILITY.md).
REPORT_VARIABLES = ("SMITH_SECURITY_REPORT", "SMITH_RELIABILITY_REPORT")


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers it too; without xdist the mark still is a known one.
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one worker")
    reports = [name for name in REPORT_VARIABLES if os.environ.get(name)]
    if reports and config.getoption("numprocesses", None):
        # Each worker would write the rows of its own tests alone, over the others'.
        raise pytest.UsageError(f"{', '.join(reports)}: run the report without -n (serially)")


#: Tests that take minutes on their own (the security suite again as a plain user): under
#: ``-n`` they start first, beside the rest, instead of ending the run alone.
LONG_FIRST = ("tests/security/test_plain_user.py::",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``pytest -n N --dist loadgroup`` the tests of a module that share a module- or
    class-scoped fixture run on one worker, so the fixture (a real ``smith`` in tmux, a
    server) is set up once, not once per worker; the :data:`LONG_FIRST` tests go first."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker sorts alike (xdist checks)
        items.sort(key=lambda item: not item.nodeid.startswith(LONG_FIRST))
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        shared = [
            name
            for name, defs in info.name2fixturedefs.items()
            if defs and defs[-1].scope in ("module", "class", "package")
        ]
        if shared:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__ if item.module else ""))
