"""The role catalog: names, aliases, dispatch edges, tints and lookup errors."""

from __future__ import annotations

import pytest

from smith_tui.engine.roles import RoleSpec, UnknownRoleError, list_roles, resolve_role

CATALOG = {
    # name: (alias, user_facing, can_dispatch, dispatch_targets, profile, tint)
    "direct": ("Smith", True, True, ("worker", "explorer"), "direct", None),
    "orchestrator": ("Tank", True, True, ("worker", "explorer"), "orchestrator", "#FFB000"),
    "worker": ("Niobe", False, False, (), "worker", "#FF4FD8"),
    "explorer": ("Link", False, False, (), "explorer", "#00E5FF"),
}


def test_catalog_matches_the_design_table() -> None:
    roles = list_roles()
    assert [r.name for r in roles] == list(CATALOG)
    for spec in roles:
        alias, facing, dispatches, targets, profile, tint = CATALOG[spec.name]
        assert (spec.alias, spec.user_facing, spec.can_dispatch) == (alias, facing, dispatches)
        assert (spec.dispatch_targets, spec.prompt_profile, spec.tint) == (targets, profile, tint)
        assert spec.default_model_key == "default"


def test_list_roles_filters_user_facing() -> None:
    assert [r.name for r in list_roles(user_facing=True)] == ["direct", "orchestrator"]
    assert [r.name for r in list_roles(user_facing=False)] == ["worker", "explorer"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [("worker", "worker"), ("Niobe", "worker"), ("TANK", "orchestrator"), (" link ", "explorer")],
)
def test_resolve_role_accepts_names_and_aliases(given: str, expected: str) -> None:
    spec = resolve_role(given)
    assert isinstance(spec, RoleSpec)
    assert spec.name == expected


@pytest.mark.parametrize("bad", ["", "admin", "smithy"])
def test_unknown_role_names_the_choices(bad: str) -> None:
    with pytest.raises(UnknownRoleError) as err:
        resolve_role(bad)
    message = str(err.value)
    assert repr(bad) in message
    assert "direct (Smith)" in message and "explorer (Link)" in message


def test_role_specs_are_immutable() -> None:
    with pytest.raises(AttributeError):
        resolve_role("direct").name = "root"  # type: ignore[misc]
