"""Fixtures of the security suite; records each attack's outcome (see support.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.security import support


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "attack(section, what): a test that tries an attack the defence must hold"
    )
    config.addinivalue_line(
        "markers", "control(section, what): the same attack without the defence, which works"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when != "call" and not (report.when == "setup" and report.skipped):
        return
    for kind in ("attack", "control"):
        marker = item.get_closest_marker(kind)
        if marker is None:
            continue
        section, what = marker.args[0], marker.args[1]
        if section not in support.SECTIONS:
            raise pytest.UsageError(f"{item.nodeid}: unknown section {section!r}")
        detail = ""
        if report.skipped and isinstance(report.longrepr, tuple):
            detail = str(report.longrepr[2])
        support.RESULTS.rows.append(
            support.Row(kind, section, what, item.nodeid, report.outcome, detail)
        )


@pytest.fixture(scope="session", autouse=True)
def security_results() -> Iterator[None]:
    """Write every recorded row to ``$SMITH_SECURITY_REPORT`` once the session ends."""
    yield
    if support.REPORT_PATH:
        support.write_report(support.REPORT_PATH)
