"""The wheel ships every package: each folder with an __init__.py is listed in pyproject."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _package_name(init: Path) -> str:
    folder = init.parent.relative_to(ROOT)
    top, *rest = folder.parts
    prefix = {
        "smith_tui": "smith_tui",
        "widgets": "smith_tui.widgets",
        "styles": "smith_tui.styles",
        "data": "smith_tui.data",
    }[top]
    return ".".join([prefix, *rest])


def test_every_package_is_listed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        _package_name(init)
        for top in ("smith_tui", "widgets", "styles", "data")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"


def test_prompt_profiles_and_styles_are_package_data() -> None:
    from importlib import resources

    prompts = resources.files("smith_tui.data") / "prompts"
    for profile in ("direct", "orchestrator", "worker", "explorer"):
        assert (prompts / f"{profile}.md").read_text().strip()
    assert (resources.files("smith_tui.styles") / "app.tcss").read_text().strip()
