"""Every config test runs with its own XDG directories and no smith variables set."""

from __future__ import annotations

from pathlib import Path

import pytest

ENV_VARIABLES = ("SMITH_API_URL", "SMITH_MODEL", "LLM_API_KEY", "OTHER_KEY")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point XDG_CONFIG_HOME / XDG_DATA_HOME into tmp_path and clear smith variables."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    for name in ENV_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return tmp_path
