"""XDG locations of the config file and the database."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.config import config_dir, data_dir, default_config_path, default_db_path


def test_xdg_variables_are_honoured(tmp_path: Path) -> None:
    assert config_dir() == tmp_path / "xdg-config" / "smith"
    assert data_dir() == tmp_path / "xdg-data" / "smith"
    assert default_config_path() == tmp_path / "xdg-config" / "smith" / "config.json"
    assert default_db_path() == tmp_path / "xdg-data" / "smith" / "smith.db"


@pytest.mark.parametrize("value", [None, "", "relative/dir"])
def test_unset_empty_or_relative_xdg_falls_back_to_home(
    value: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert default_config_path() == tmp_path / "home" / ".config" / "smith" / "config.json"
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "smith" / "smith.db"


def test_nothing_is_created_on_disk(tmp_path: Path) -> None:
    default_config_path()
    default_db_path()
    assert not (tmp_path / "xdg-config").exists()
    assert not (tmp_path / "xdg-data").exists()
