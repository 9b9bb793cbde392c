"""The codec: deterministic JSON and record validation."""

import pytest

from smith_tui.store import Conversation, StoreError, UsageTotals, codec


def test_json_is_deterministic() -> None:
    one = codec.dumps({"b": [1, {"y": 2, "x": 1}], "a": "é"})
    two = codec.dumps({"a": "é", "b": [1, {"x": 1, "y": 2}]})
    assert one == two == '{"a":"é","b":[1,{"x":1,"y":2}]}'
    assert codec.loads(one) == {"a": "é", "b": [1, {"x": 1, "y": 2}]}


@pytest.mark.parametrize("value", [float("nan"), {"k": object()}, {1, 2}])
def test_values_json_cannot_hold_are_refused(value: object) -> None:
    with pytest.raises(StoreError, match="cannot be stored as JSON"):
        codec.dumps(value, what="thing")


def test_records_are_checked_against_their_annotations() -> None:
    good = Conversation("id1", "proj", None, 1.0, 2, metadata={"a": 1})
    assert codec.validate_record(good) is good
    with pytest.raises(StoreError, match=r"Conversation.title must be str \| None, got int"):
        codec.validate_record(Conversation("id1", "proj", 5, 1.0, 2.0))  # type: ignore[arg-type]
    with pytest.raises(StoreError, match=r"UsageTotals\.calls must be int, got bool"):
        codec.validate_record(UsageTotals(calls=True))
    with pytest.raises(StoreError, match="created_at must be float"):
        codec.validate_record(Conversation("i", "p", None, float("inf"), 1.0))
    with pytest.raises(StoreError, match="expected a record dataclass"):
        codec.validate_record({"id": 1})


@pytest.mark.parametrize("bad", ["", "a:b", " padded", None, 7])
def test_structural_ids_are_checked(bad: object) -> None:
    with pytest.raises(StoreError):
        codec.check_structural_id(bad, "turn_id")


def test_new_ids_are_url_safe_and_colon_free() -> None:
    ids = {codec.new_id() for _ in range(500)}
    assert len(ids) == 500
    assert all(codec.check_structural_id(i, "id") == i and len(i) == 12 for i in ids)


def test_new_ids_are_alphanumeric_and_never_look_like_options() -> None:
    from smith_tui.store.codec import new_id

    ids = {new_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(len(i) == 12 and i.isalnum() and i.isascii() for i in ids)
