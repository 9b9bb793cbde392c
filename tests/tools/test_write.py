"""The write tool on real files: create, overwrite, parents, modes and errors."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin.write import TOOL
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import typed_config

handler = TOOL.run  # validates like the executor, then runs the handler


def make_ctx(
    cwd: Path, config: dict[str, Any] | None = None, root: Path | None = None
) -> ToolContext:
    """A context in ``cwd``; the project root is ``root`` (``cwd`` when not given)."""
    return ToolContext(
        role="worker",
        turn_id="turn1",
        cwd=cwd,
        cancel=CancelToken.new_root(),
        config=typed_config(config),
        project_root=root,
    )


def test_spec_shape() -> None:
    assert TOOL.name == "write"
    assert TOOL.mutating
    assert TOOL.input_schema["required"] == ["path", "content"]


async def test_creates_file_and_parents(tmp_path: Path) -> None:
    out = await handler({"path": "a/b/new.py", "content": "print('hi')\n"}, make_ctx(tmp_path))
    target = tmp_path / "a" / "b" / "new.py"
    assert target.read_text() == "print('hi')\n"
    digest = hashlib.sha256(b"print('hi')\n").hexdigest()
    assert out.metadata["sha256"] == digest
    assert out.metadata["is_new"] is True
    assert out.metadata["lines"] == 1
    assert out.content.startswith(f"Created {target}")
    assert digest in out.content
    assert out.mutation_state == "attempted"


async def test_new_file_gets_umask_mode_not_temp_file_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        await handler({"path": "m.txt", "content": "x"}, make_ctx(tmp_path))
    finally:
        os.umask(old)
    assert (tmp_path / "m.txt").stat().st_mode & 0o777 == 0o644


async def test_overwrite_keeps_mode(tmp_path: Path) -> None:
    # An absolute path, from a working directory elsewhere inside the project.
    (tmp_path / "sub").mkdir()
    target = tmp_path / "tool.sh"
    target.write_text("old\n")
    target.chmod(0o750)
    out = await handler(
        {"path": str(target), "content": "new\n"}, make_ctx(tmp_path / "sub", root=tmp_path)
    )
    assert target.read_text() == "new\n"
    assert target.stat().st_mode & 0o7777 == 0o750
    assert out.metadata["is_new"] is False
    assert out.content.startswith("Overwrote")
    assert sorted(os.listdir(tmp_path)) == ["sub", "tool.sh"]


async def test_empty_content_and_unicode(tmp_path: Path) -> None:
    out = await handler({"path": "empty", "content": ""}, make_ctx(tmp_path))
    assert (tmp_path / "empty").read_bytes() == b""
    assert out.metadata["lines"] == 0
    await handler({"path": "u.txt", "content": "héllo → wörld"}, make_ctx(tmp_path))
    assert (tmp_path / "u.txt").read_bytes() == "héllo → wörld".encode()


async def test_directory_target_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError) as err:
        await handler({"path": "d", "content": "x"}, make_ctx(tmp_path))
    assert err.value.code == "is_directory"


async def test_parent_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    with pytest.raises(ToolError) as err:
        await handler({"path": "plain/child.txt", "content": "x"}, make_ctx(tmp_path))
    assert err.value.code == "bad_path"
    assert f"{tmp_path / 'plain'} exists and is not a directory" in err.value.message


async def test_os_failure_is_reported(tmp_path: Path) -> None:
    # /proc refuses new files even for root; it is outside the project, so allow it
    # as an extra root for the write to be attempted at all.
    ctx = make_ctx(tmp_path, {"services": {"tool": {"extra_roots": ["/proc"]}}})
    with pytest.raises(ToolError, match=r"could not write /proc/self/new\.txt"):
        await handler({"path": "/proc/self/new.txt", "content": "x"}, ctx)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"content": "x"}, "missing required argument `path`"),
        ({"path": "a.txt"}, "missing required argument `content`"),
        ({"path": "a.txt", "content": 3}, "`content` must be a string"),
        ({"path": " ", "content": "x"}, "`path` must not be empty"),
    ],
)
async def test_bad_arguments(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx(tmp_path))
    assert message in err.value.message
    assert os.listdir(tmp_path) == []
