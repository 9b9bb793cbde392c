"""The read tool on real files: windows, numbering, hashes, budgets and every error."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin.read import TOOL
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import typed_config

handler = TOOL.run  # validates like the executor, then runs the handler


def make_ctx(
    cwd: Path, config: dict[str, Any] | None = None, root: Path | None = None
) -> ToolContext:
    """A context in ``cwd``; the project root is ``root`` (``cwd`` when not given)."""
    return ToolContext(
        role="explorer",
        turn_id="turn1",
        cwd=cwd,
        cancel=CancelToken.new_root(),
        config=typed_config(config),
        project_root=root,
    )


def write_lines(path: Path, count: int) -> bytes:
    data = "".join(f"line {n}\n" for n in range(1, count + 1)).encode()
    path.write_bytes(data)
    return data


def test_spec_shape() -> None:
    assert TOOL.name == "read"
    assert not TOOL.mutating
    assert TOOL.input_schema["required"] == ["path"]


async def test_reads_whole_small_file_with_numbers_and_hash(tmp_path: Path) -> None:
    data = write_lines(tmp_path / "a.txt", 3)
    out = await handler({"path": "a.txt"}, make_ctx(tmp_path))
    digest = hashlib.sha256(data).hexdigest()
    assert out.content.splitlines()[0] == f"{tmp_path / 'a.txt'}: 3 lines, sha256 {digest}"
    assert "lines 1-3 of 3" in out.content
    assert "     1\tline 1\n     2\tline 2\n     3\tline 3" in out.content
    assert out.metadata["sha256"] == digest
    assert out.metadata["total_lines"] == 3
    assert out.mutation_state == "none"


async def test_window_with_offset_and_limit(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 50)
    out = await handler({"path": "a.txt", "offset": 10, "limit": 3}, make_ctx(tmp_path))
    assert "lines 10-12 of 50" in out.content
    assert "    10\tline 10\n    11\tline 11\n    12\tline 12" in out.content
    assert "line 13" not in out.content
    assert "continue with offset=13" in out.content
    assert (out.metadata["start_line"], out.metadata["end_line"]) == (10, 12)


async def test_default_limit_is_2000_lines(tmp_path: Path) -> None:
    write_lines(tmp_path / "big.txt", 2500)
    config = {"services": {"tool": {"read": {"max_output_chars": 100_000}}}}
    out = await handler({"path": "big.txt"}, make_ctx(tmp_path, config))
    assert "lines 1-2000 of 2500" in out.content
    assert "\tline 2000\n" in out.content
    assert "line 2001" not in out.content
    assert "500 more lines; continue with offset=2001" in out.content


async def test_absolute_path_and_tilde_free_relative_parent(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write_lines(tmp_path / "top.txt", 1)
    # The working directory is a subfolder of the project: `..` climbs back to its root.
    out = await handler({"path": "../top.txt"}, make_ctx(tmp_path / "sub", root=tmp_path))
    assert out.metadata["path"] == str(tmp_path / "top.txt")
    (tmp_path / "other").mkdir()
    ctx = make_ctx(tmp_path / "other", root=tmp_path)
    out = await handler({"path": str(tmp_path / "top.txt")}, ctx)
    assert "line 1" in out.content


async def test_crlf_lines_shown_without_cr_and_no_final_newline(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree")
    out = await handler({"path": "w.txt"}, make_ctx(tmp_path))
    assert "3 lines" in out.content
    assert "\r" not in out.content
    assert out.content.endswith("     3\tthree")


async def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_bytes(b"")
    out = await handler({"path": "e.txt"}, make_ctx(tmp_path))
    assert "0 lines" in out.content
    assert "(empty file)" in out.content
    assert out.metadata["sha256"] == hashlib.sha256(b"").hexdigest()


async def test_budget_stops_at_whole_lines_with_continuation(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 1000)
    config = {"services": {"tool": {"read": {"max_output_chars": 1000}}}}
    out = await handler({"path": "a.txt"}, make_ctx(tmp_path, config))
    assert len(out.content) <= 1300
    last = out.metadata["end_line"]
    assert 10 < last < 1000
    assert out.metadata["truncated"]
    assert f"Continue with offset={last + 1}" in out.content
    assert f"\tline {last}\n" in out.content + "\n"


async def test_very_long_line_is_clipped(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("x" * 5000 + "\n")
    out = await handler({"path": "long.txt"}, make_ctx(tmp_path))
    assert "[…3000 more characters]" in out.content


async def test_missing_file_names_resolved_path(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        await handler({"path": "nope.txt"}, make_ctx(tmp_path))
    assert err.value.code == "not_found"
    assert str(tmp_path / "nope.txt") in err.value.message
    assert "relative to the working directory" in err.value.message


async def test_missing_directory_is_explained(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="does not exist either"):
        await handler({"path": "no/such/dir.txt"}, make_ctx(tmp_path))


async def test_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError) as err:
        await handler({"path": "d"}, make_ctx(tmp_path))
    assert err.value.code == "is_directory"
    assert "is a directory" in err.value.message


async def test_binary_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x89PNG\r\n\x00\x00data")
    with pytest.raises(ToolError) as err:
        await handler({"path": "b.bin"}, make_ctx(tmp_path))
    assert err.value.code == "binary_file"
    assert "binary" in err.value.message


async def test_offset_past_end_reports_line_count(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 7)
    with pytest.raises(ToolError) as err:
        await handler({"path": "a.txt", "offset": 8}, make_ctx(tmp_path))
    assert "offset 8 is past the end" in err.value.message
    assert "the file has 7 lines" in err.value.message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `path`"),
        ({"path": ""}, "`path` must not be empty"),
        ({"path": ["a"]}, "`path` must be a string"),
        ({"path": "a.txt", "offset": 0}, "`offset` must be an integer >= 1, got 0"),
        ({"path": "a.txt", "offset": "x"}, "`offset` must be an integer >= 1, got 'x'"),
        ({"path": "a.txt", "limit": 1.5}, "`limit` must be an integer >= 1, got 1.5"),
        ({"path": "a.txt", "limit": -3}, "`limit` must be an integer >= 1, got -3"),
        ({"path": "a\x00b"}, "NUL character"),
    ],
)
async def test_bad_arguments(tmp_path: Path, args: dict[str, Any], message: str) -> None:
    write_lines(tmp_path / "a.txt", 2)
    with pytest.raises(ToolError) as err:
        await handler(args, make_ctx(tmp_path))
    assert message in err.value.message
