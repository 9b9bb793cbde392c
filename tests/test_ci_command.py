"""CI runs the README's test command as it is written there."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_test_command() -> str:
    """The command in the README's block under "Install and run the whole test suite"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    _, found, after = readme.partition("Install and run the whole test suite")
    assert found, "the README lost its 'Install and run the whole test suite' paragraph"
    block = after.split("```sh\n", 1)[1].split("\n```", 1)[0]
    return block.strip()


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    command = readme_test_command()
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command in lines, f".ci/run does not run the README's test command:\n{command}"


def test_the_test_command_runs_pytest_in_a_fixed_order() -> None:
    # CI runs in file order (random order is a separate check, see the README).
    assert "-p no:randomly" in readme_test_command()
