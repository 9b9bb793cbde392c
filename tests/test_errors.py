"""One root for Smith's errors (smith_tui.errors): every layer's error is a SmithError with a
message and a code, and error_text puts any exception into words."""

from __future__ import annotations

import errno

import pytest

from smith_tui.config.errors import ConfigError, OverrideError
from smith_tui.config.front_matter import FrontMatterError
from smith_tui.engine.compaction import CompactionError
from smith_tui.engine.errors import UserRequestError
from smith_tui.engine.model_select import ModelSelectionError
from smith_tui.engine.slash.command_table import CommandError
from smith_tui.errors import SmithError, error_text
from smith_tui.llm.errors import LLMError
from smith_tui.store.errors import StoreError
from smith_tui.tools.checkpoints.shadow_repo import CheckpointError
from smith_tui.tools.spec import ToolError
from smith_tui.tools.worktrees import WorktreeError


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ConfigError("set llm.api_url"), "config"),
        (OverrideError("nothing was written"), "config_override"),
        (FrontMatterError("the block never ends", 3), "front_matter"),
        (StoreError("the database is locked"), "store"),
        (LLMError("http", "http_429", "slow down"), "http_429"),
        (ToolError("no such file"), "tool_error"),
        (ToolError("too big", code="too_large"), "too_large"),
        (CheckpointError("nothing to restore"), "checkpoint_failed"),
        (WorktreeError("not a git repository"), "worktree_failed"),
        (CommandError("usage: /model NAME"), "command"),
        (CompactionError("nothing to compact"), "compaction"),
        (ModelSelectionError("set default_model"), "model_selection"),
        (UserRequestError("a turn is running"), "user_request"),
    ],
)
def test_every_layer_error_is_a_smith_error_with_message_and_code(
    error: SmithError, code: str
) -> None:
    assert isinstance(error, SmithError)
    assert error.code == code
    assert error.message
    assert error_text(error) == error.message


def test_subclasses_keep_their_own_str_and_other_bases() -> None:
    llm = LLMError("http", "http_500", "the server failed")
    assert (llm.message, str(llm)) == ("the server failed", "[http_500] the server failed")
    front = FrontMatterError("the block never ends", 3)
    assert (front.message, str(front)) == ("the block never ends", "line 3: the block never ends")
    assert isinstance(front, ValueError)  # callers that catch ValueError still catch it
    assert str(ConfigError("set llm.api_url")) == "set llm.api_url"


def test_error_text_of_anything_else_is_its_text_or_type_name() -> None:
    assert error_text(ValueError("bad number")) == "bad number"
    assert error_text(OSError(errno.ENOENT, "No such file", "x")) == ("[Errno 2] No such file: 'x'")
    assert error_text(RuntimeError()) == "RuntimeError"
    assert error_text(StoreError("")) == "StoreError"


def test_the_code_of_one_error_does_not_change_its_class() -> None:
    ToolError("a", code="custom")
    assert ToolError("b").code == "tool_error"
    assert SmithError("c").code == "error"
