"""XDG locations of the config file and the database."""

from __future__ import annotations

from pathlib import Path

import pytest

from smith_tui.config import config_dir, data_dir, default_config_path, default_db_path
from smith_tui.config.locations import home_dir


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


def test_an_environment_of_its_own_decides_the_config_folder(tmp_path: Path) -> None:
    # A runtime passes its own environment: the process's (the fixture's) is not read.
    env = {"XDG_CONFIG_HOME": str(tmp_path / "mine"), "HOME": str(tmp_path / "home")}
    assert config_dir(env) == tmp_path / "mine" / "smith"
    assert config_dir({"HOME": str(tmp_path / "home")}) == tmp_path / "home" / ".config" / "smith"
    relative = {"XDG_CONFIG_HOME": "rel", "HOME": str(tmp_path / "home")}
    assert config_dir(relative) == tmp_path / "home" / ".config" / "smith"
    assert home_dir({"HOME": "relative"}) == Path.home()
