"""The edit tool on real files: operations, hash guard, line endings, modes, errors."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin.edit import TOOL
from smith_tui.tools.builtin.read import TOOL as READ_TOOL
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import typed_config

handler = TOOL.run  # validates like the executor, then runs the handler
read_handler = READ_TOOL.run


def make_ctx(cwd: Path, config: dict[str, Any] | None = None) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="turn1",
        cwd=cwd,
        cancel=CancelToken.new_root(),
        config=typed_config(config),
    )


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_file(tmp_path: Path, data: bytes, name: str = "f.txt") -> tuple[Path, str]:
    path = tmp_path / name
    path.write_bytes(data)
    return path, sha(data)


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


FIVE = b"a\nb\nc\nd\ne\n"


async def edit(tmp_path: Path, **args: Any) -> Any:
    args.setdefault("path", "f.txt")
    return await handler(args, make_ctx(tmp_path))


def test_spec_shape() -> None:
    assert TOOL.name == "edit"
    assert TOOL.mutating
    assert TOOL.input_schema["properties"]["operation"]["enum"] == ["replace", "insert", "delete"]


async def test_replace_range(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, FIVE)
    out = await edit(
        tmp_path,
        expected_hash=digest,
        operation="replace",
        start_line=2,
        end_line=3,
        text="X\nY\nZ",
    )
    assert path.read_bytes() == b"a\nX\nY\nZ\nd\ne\n"
    assert out.metadata["new_hash"] == sha(path.read_bytes())
    assert (out.metadata["affected_start"], out.metadata["affected_end"]) == (2, 4)
    assert out.metadata["line_delta"] == 1
    assert out.mutation_state == "attempted"
    assert f"new hash: {sha(path.read_bytes())}" in out.content
    assert "line delta +1" in out.content
    # Context: 3 lines around the change, numbered.
    assert "     1\ta\n     2\tX\n     3\tY\n     4\tZ\n     5\td\n     6\te" in out.content


async def test_replace_single_line_defaults_end(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, FIVE)
    out = await edit(tmp_path, expected_hash=digest, operation="replace", start_line=5, text="E\n")
    assert path.read_bytes() == b"a\nb\nc\nd\nE\n"
    assert out.metadata["line_delta"] == 0


async def test_replace_with_empty_text_removes_range(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, FIVE)
    out = await edit(
        tmp_path, expected_hash=digest, operation="replace", start_line=1, end_line=2, text=""
    )
    assert path.read_bytes() == b"c\nd\ne\n"
    assert out.metadata["line_delta"] == -2


async def test_insert_before_line_and_append(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, FIVE)
    out = await edit(tmp_path, expected_hash=digest, operation="insert", start_line=1, text="top")
    assert path.read_bytes() == b"top\na\nb\nc\nd\ne\n"
    out = await edit(
        tmp_path,
        expected_hash=out.metadata["new_hash"],
        operation="insert",
        start_line=7,
        text="end1\nend2\n",
    )
    assert path.read_bytes() == b"top\na\nb\nc\nd\ne\nend1\nend2\n"
    assert (out.metadata["affected_start"], out.metadata["affected_end"]) == (7, 8)
    assert out.metadata["line_delta"] == 2


async def test_insert_empty_line(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, FIVE)
    await edit(tmp_path, expected_hash=digest, operation="insert", start_line=3, text="\n")
    assert path.read_bytes() == b"a\nb\n\nc\nd\ne\n"


async def test_delete_range(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, FIVE)
    out = await edit(tmp_path, expected_hash=digest, operation="delete", start_line=2, end_line=4)
    assert path.read_bytes() == b"a\ne\n"
    assert out.metadata["line_delta"] == -3
    assert out.metadata["removed_lines"] == 3
    assert "deleted lines 2-4 (3)" in out.content


async def test_delete_everything_leaves_empty_file(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, b"only\n")
    out = await edit(tmp_path, expected_hash=digest, operation="delete", start_line=1)
    assert path.read_bytes() == b""
    assert "(file is now empty)" in out.content


async def test_insert_into_empty_file(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, b"")
    await edit(tmp_path, expected_hash=digest, operation="insert", start_line=1, text="hello")
    assert path.read_bytes() == b"hello\n"


async def test_hash_from_read_round_trips(tmp_path: Path) -> None:
    path, _ = make_file(tmp_path, FIVE)
    read = await read_handler({"path": "f.txt"}, make_ctx(tmp_path))
    await edit(
        tmp_path,
        expected_hash=read.metadata["sha256"].upper(),
        operation="replace",
        start_line=1,
        text="A",
    )
    assert path.read_bytes().startswith(b"A\nb")


async def test_stale_hash_is_rejected_and_nothing_written(tmp_path: Path) -> None:
    path, old = make_file(tmp_path, FIVE)
    path.write_bytes(b"changed\n")
    before = os.stat(path).st_mtime_ns
    with pytest.raises(ToolError) as err:
        await edit(tmp_path, expected_hash=old, operation="delete", start_line=1)
    current = sha(b"changed\n")
    assert err.value.code == "stale_hash"
    assert current in err.value.message
    assert err.value.data == {"current_hash": current}
    assert "Nothing was written" in err.value.message
    assert path.read_bytes() == b"changed\n"
    assert os.stat(path).st_mtime_ns == before


async def test_crlf_file_keeps_crlf_and_inserted_text_is_converted(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, b"one\r\ntwo\r\nthree\r\n")
    out = await edit(
        tmp_path, expected_hash=digest, operation="replace", start_line=2, text="TWO\nTWO-B"
    )
    assert path.read_bytes() == b"one\r\nTWO\r\nTWO-B\r\nthree\r\n"
    assert out.metadata["line_ending"] == "crlf"
    assert "\r" not in out.content


async def test_crlf_text_into_lf_file_is_converted(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, FIVE)
    await edit(tmp_path, expected_hash=digest, operation="insert", start_line=2, text="p\r\nq\r\n")
    assert path.read_bytes() == b"a\np\nq\nb\nc\nd\ne\n"


async def test_missing_final_newline_is_preserved(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, b"a\nb")
    out = await edit(tmp_path, expected_hash=digest, operation="insert", start_line=3, text="c\n")
    assert path.read_bytes() == b"a\nb\nc"
    out = await edit(
        tmp_path,
        expected_hash=out.metadata["new_hash"],
        operation="replace",
        start_line=1,
        text="A",
    )
    assert path.read_bytes() == b"A\nb\nc"


async def test_mode_is_kept_and_write_is_atomic(tmp_path: Path) -> None:
    path, digest = make_file(tmp_path, b"#!/bin/sh\necho hi\n", name="run.sh")
    path.chmod(0o751)
    inode_before = path.stat().st_ino
    await edit(
        tmp_path,
        path="run.sh",
        expected_hash=digest,
        operation="replace",
        start_line=2,
        text="echo bye",
    )
    assert path.stat().st_mode & 0o7777 == 0o751
    # Replaced by rename, not rewritten in place; no temp file left behind.
    assert path.stat().st_ino != inode_before
    assert sorted(os.listdir(tmp_path)) == ["run.sh"]


async def test_symlink_target_is_edited_and_link_kept(tmp_path: Path) -> None:
    target, digest = make_file(tmp_path, FIVE, name="real.txt")
    (tmp_path / "link.txt").symlink_to(target)
    await edit(tmp_path, path="link.txt", expected_hash=digest, operation="delete", start_line=1)
    assert (tmp_path / "link.txt").is_symlink()
    assert target.read_bytes() == b"b\nc\nd\ne\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"operation": "replace", "start_line": 6, "text": "x"}, "start_line 6 is past the end"),
        (
            {"operation": "replace", "start_line": 2, "end_line": 9, "text": "x"},
            "end_line 9 is past the end",
        ),
        (
            {"operation": "delete", "start_line": 4, "end_line": 2},
            "end_line 2 is before start_line 4",
        ),
        ({"operation": "insert", "start_line": 7, "text": "x"}, "start_line must be 1-6"),
        (
            {"operation": "insert", "start_line": 1, "end_line": 2, "text": "x"},
            "`end_line` is not used by insert",
        ),
        ({"operation": "insert", "start_line": 1, "text": ""}, "insert needs a non-empty `text`"),
        ({"operation": "insert", "start_line": 1}, "insert needs a non-empty `text`"),
        ({"operation": "replace", "start_line": 1}, "replace needs `text`"),
        ({"operation": "delete", "start_line": 1, "text": "x"}, "delete takes no `text`"),
        ({"operation": "upsert", "start_line": 1}, "`operation` must be one of"),
        ({"operation": "delete"}, "missing required argument `start_line`"),
        ({"operation": "delete", "start_line": 0}, "`start_line` must be an integer >= 1, got 0"),
        ({"operation": "replace", "start_line": 1, "text": 5}, "`text` must be a string"),
    ],
)
async def test_bad_ranges_and_arguments(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    path, digest = make_file(tmp_path, FIVE)
    with pytest.raises(ToolError) as err:
        await edit(tmp_path, expected_hash=digest, **args)
    assert message in err.value.message
    assert path.read_bytes() == FIVE


async def test_replace_in_empty_file_suggests_insert(tmp_path: Path) -> None:
    _, digest = make_file(tmp_path, b"")
    with pytest.raises(ToolError, match="use operation=insert with start_line=1"):
        await edit(tmp_path, expected_hash=digest, operation="replace", start_line=1, text="x")


@pytest.mark.parametrize(
    ("expected_hash", "message"),
    [(None, "missing required argument `expected_hash`"), ("abc", "64-character SHA-256")],
)
async def test_bad_hash_argument(tmp_path: Path, expected_hash: Any, message: str) -> None:
    make_file(tmp_path, FIVE)
    with pytest.raises(ToolError, match=message):
        await edit(tmp_path, expected_hash=expected_hash, operation="delete", start_line=1)


async def test_missing_file_suggests_write(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        await edit(
            tmp_path, path="ghost.txt", expected_hash="0" * 64, operation="delete", start_line=1
        )
    assert err.value.code == "not_found"
    assert str(tmp_path / "ghost.txt") in err.value.message


async def test_binary_and_directory_are_refused(tmp_path: Path) -> None:
    make_file(tmp_path, b"\x00\x01", name="bin")
    (tmp_path / "dir").mkdir()
    with pytest.raises(ToolError, match="binary"):
        await edit(
            tmp_path, path="bin", expected_hash=sha(b"\x00\x01"), operation="delete", start_line=1
        )
    with pytest.raises(ToolError, match="is a directory"):
        await edit(tmp_path, path="dir", expected_hash="0" * 64, operation="delete", start_line=1)


async def test_invalid_utf8_is_refused(tmp_path: Path) -> None:
    data = b"caf\xe9\n"
    path, digest = make_file(tmp_path, data)
    with pytest.raises(ToolError, match="not valid UTF-8"):
        await edit(tmp_path, expected_hash=digest, operation="delete", start_line=1)
    assert path.read_bytes() == data


async def test_write_failure_is_reported(tmp_path: Path) -> None:
    # No file can be created next to /proc/self/comm, not even by root.
    proc_file = "/proc/self/comm"
    if not sys.platform.startswith("linux"):
        pytest.skip("needs Linux /proc")
    digest = sha(read_bytes(proc_file))
    with pytest.raises(ToolError) as err:
        await handler(
            {
                "path": proc_file,
                "expected_hash": digest,
                "operation": "replace",
                "start_line": 1,
                "text": "renamed",
            },
            # /proc is outside the project: allow it so the write itself is attempted.
            make_ctx(tmp_path, {"services": {"tool": {"extra_roots": ["/proc"]}}}),
        )
    assert err.value.code == "os_error"
    assert "could not write /proc/self/comm" in err.value.message
