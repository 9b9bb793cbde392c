"""edit and write put a unified diff for the user in the result metadata: paths relative
to the project, ``+N``/``-M`` counts, and the model-facing content unchanged."""

from __future__ import annotations

import hashlib
from pathlib import Path

from smith_tui.cancel import CancelToken
from smith_tui.tools.builtin.edit import TOOL as EDIT
from smith_tui.tools.builtin.write import TOOL as WRITE
from smith_tui.tools.diffs import MAX_DIFF_LINES
from smith_tui.tools.spec import ToolContext


def make_ctx(project: Path, cwd: Path | None = None) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="turn1",
        cwd=cwd or project,
        cancel=CancelToken.new_root(),
        project_root=project,
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_edit_replace_diff_is_relative_to_the_project_with_context(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    target = src / "x.py"
    target.write_text("".join(f"line {n}\n" for n in range(1, 11)))
    args = {
        "path": str(target),  # absolute: still shown relative to the project
        "expected_hash": sha(target),
        "operation": "replace",
        "start_line": 5,
        "end_line": 6,
        "text": "five\nfive and a half\nsix\n",
    }
    out = await EDIT.run(args, make_ctx(tmp_path, cwd=src))
    meta = out.metadata
    assert meta["diff"].splitlines() == [
        "--- a/src/x.py",
        "+++ b/src/x.py",
        "@@ -2,8 +2,9 @@",
        " line 2",
        " line 3",
        " line 4",
        "-line 5",
        "-line 6",
        "+five",
        "+five and a half",
        "+six",
        " line 7",
        " line 8",
        " line 9",
    ]
    assert (meta["diff_added"], meta["diff_removed"]) == (3, 2)
    # What the model reads is unchanged: the hash and numbered context, no diff.
    assert "new hash:" in out.content and "+five" not in out.content


async def test_edit_crlf_delete_at_the_start(tmp_path: Path) -> None:
    target = tmp_path / "w.txt"
    target.write_bytes(b"a\r\nb\r\nc\r\n")
    args = {
        "path": "w.txt",
        "expected_hash": sha(target),
        "operation": "delete",
        "start_line": 1,
    }
    meta = (await EDIT.run(args, make_ctx(tmp_path))).metadata
    assert meta["diff"].splitlines()[2:] == ["@@ -1,3 +1,2 @@", "-a", " b", " c"]
    assert (meta["diff_added"], meta["diff_removed"]) == (0, 1)


async def test_write_over_a_file_diffs_against_what_was_there(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("one\ntwo\nthree\n")
    out = await WRITE.run(
        {"path": "notes.md", "content": "one\n2\nthree\nfour\n"}, make_ctx(tmp_path)
    )
    diff = out.metadata["diff"].splitlines()
    assert diff[:2] == ["--- a/notes.md", "+++ b/notes.md"]
    assert [line for line in diff[3:] if line[0] in "+-"] == ["-two", "+2", "+four"]
    assert (out.metadata["diff_added"], out.metadata["diff_removed"]) == (2, 1)
    assert "sha256" in out.content and "+four" not in out.content


async def test_write_of_a_new_file_is_all_added(tmp_path: Path) -> None:
    out = await WRITE.run({"path": "pkg/new.py", "content": "a = 1\nb = 2\n"}, make_ctx(tmp_path))
    assert out.metadata["diff"].splitlines() == [
        "--- /dev/null",
        "+++ b/pkg/new.py",
        "@@ -0,0 +1,2 @@",
        "+a = 1",
        "+b = 2",
    ]
    assert (out.metadata["diff_added"], out.metadata["diff_removed"]) == (2, 0)


async def test_write_over_binary_keeps_no_diff_and_a_huge_diff_is_cut(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe\x00")
    out = await WRITE.run({"path": "blob.bin", "content": "text\n"}, make_ctx(tmp_path))
    assert "diff" not in out.metadata
    big = "".join(f"{n}\n" for n in range(MAX_DIFF_LINES + 50))
    out = await WRITE.run({"path": "big.txt", "content": big}, make_ctx(tmp_path))
    lines = out.metadata["diff"].splitlines()
    assert len(lines) == MAX_DIFF_LINES + 1
    assert lines[-1] == "… 53 more diff lines not shown"
    assert out.metadata["diff_added"] == MAX_DIFF_LINES + 50
