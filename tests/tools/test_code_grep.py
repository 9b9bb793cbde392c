"""code_grep on a real folder: ranking, grouping, ignore rules, options, budget and errors."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.cancel import Cancelled
from smith_tui.tools.builtin.code import grep as grep_module
from smith_tui.tools.builtin.code.grep import FILE_MATCH_CAP, MATCH_CAP, TOOL, search
from smith_tui.tools.process import RunningProcess
from smith_tui.tools.spec import ToolContext, ToolError, ToolOutput
from tests.support.tools import project_context, tool_budget
from tests.support.tools import write_file as write

handler = TOOL.run  # validates like the executor, then runs the handler


def ctx_for(root: Path, **config: Any) -> ToolContext:
    return project_context(root, "explorer", turn_id="turn-1", **config)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, ".gitignore", "build/\n*.log\n")
    write(
        tmp_path,
        "src/engine.py",
        "import os\n\nclass Engine:\n    def start(self):\n        return start_engine()\n",
    )
    write(
        tmp_path,
        "src/deep/nested/usage.py",
        "from engine import start_engine\nstart_engine()\nstart_engine()\nstart_engine()\n",
    )
    write(tmp_path, "src/start.py", "def start_engine():\n    pass\n")
    write(tmp_path, "lib/util.lua", "-- START here\nlocal function start() end\n")
    write(tmp_path, "build/generated.py", "start_engine()\n")
    write(tmp_path, "debug.log", "start_engine failed\n")
    write(tmp_path, ".hidden/secret.py", "start_engine()\n")
    write(tmp_path, ".git/config", "[core]\n\tstart_engine = 1\n")
    write(tmp_path, "regex.txt", "price is $5.00 (a+b)\n")
    return tmp_path


async def grep(root: Path, **args: Any) -> ToolOutput:
    return await handler(args, ctx_for(root))


def file_headers(content: str) -> list[str]:
    return [line.split(" (")[0] for line in content.splitlines()[1:] if not line.startswith(" ")]


async def test_matches_are_grouped_by_file_with_line_numbers(project: Path) -> None:
    out = await grep(project, pattern="start_engine")
    assert out.ok
    assert "in 3 files" in out.content.splitlines()[0]
    assert "src/deep/nested/usage.py (4 matching lines)" in out.content
    assert "  2: start_engine()" in out.content
    assert "  1: def start_engine():" in out.content
    assert out.metadata["matches"] == 6
    assert out.metadata["files"] == 3


async def test_definitions_rank_first_then_match_count_then_short_paths(project: Path) -> None:
    out = await grep(project, pattern="start_engine")
    # src/start.py defines it (1 match); usage.py has 4 matches; engine.py 1 match.
    assert file_headers(out.content) == [
        "src/start.py",
        "src/deep/nested/usage.py",
        "src/engine.py",
    ]


async def test_shorter_path_wins_a_tie(tmp_path: Path) -> None:
    write(tmp_path, "a/b/c/long_name.txt", "needle\n")
    write(tmp_path, "x.txt", "needle\n")
    write(tmp_path, "a/y.txt", "needle\n")
    out = await grep(tmp_path, pattern="needle")
    assert file_headers(out.content) == ["x.txt", "a/y.txt", "a/b/c/long_name.txt"]


async def test_gitignore_hidden_and_git_are_never_searched(project: Path) -> None:
    out = await grep(project, pattern="start_engine")
    for hidden in ("build/", "debug.log", ".hidden", ".git"):
        assert hidden not in out.content


async def test_case_insensitive(project: Path) -> None:
    sensitive = await grep(project, pattern="START")
    insensitive = await grep(project, pattern="START", case_insensitive=True)
    assert sensitive.metadata["matches"] == 1
    assert insensitive.metadata["matches"] > 1
    assert "src/engine.py" in insensitive.content


async def test_fixed_strings_treats_regex_characters_literally(project: Path) -> None:
    out = await grep(project, pattern="$5.00 (a+b)", fixed_strings=True)
    assert "regex.txt" in out.content
    assert "1: price is $5.00 (a+b)" in out.content


async def test_pattern_starting_with_a_dash_is_a_pattern(tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "x --version y\n")
    out = await grep(tmp_path, pattern="--version")
    assert "1: x --version y" in out.content


async def test_context_lines_are_marked_and_groups_separated(tmp_path: Path) -> None:
    lines = [f"line {n}" for n in range(1, 21)]
    lines[4] = "target one"
    lines[14] = "target two"
    write(tmp_path, "f.txt", "\n".join(lines) + "\n")
    out = await grep(tmp_path, pattern="target", context=1)
    body = out.content
    assert (
        "  4- line 4\n  5: target one\n  6- line 6\n  --\n  14- line 14\n  15: target two" in body
    )


async def test_path_and_glob_narrow_the_search(project: Path) -> None:
    in_dir = await grep(project, pattern="start", path="lib")
    assert file_headers(in_dir.content) == ["lib/util.lua"]
    by_glob = await grep(project, pattern="start_engine", glob="*.py", path="src/deep")
    assert file_headers(by_glob.content) == ["src/deep/nested/usage.py"]
    excluded = await grep(project, pattern="start_engine", glob=["*.py", "!src/deep/**"])
    assert "usage.py" not in excluded.content
    one_file = await grep(project, pattern="engine", path="src/engine.py")
    assert file_headers(one_file.content) == ["src/engine.py"]


async def test_no_match_is_a_plain_result(project: Path) -> None:
    out = await grep(project, pattern="zebra_unicorn")
    assert out.ok
    assert out.content == "No matches for 'zebra_unicorn' in the project."
    assert out.metadata["matches"] == 0


async def test_max_results_limits_lines_and_says_so(tmp_path: Path) -> None:
    for n in range(30):
        write(tmp_path, f"pkg/m{n:02}.py", "hit\nhit\n")
    out = await grep(tmp_path, pattern="hit", max_results=7)
    shown = re.findall(r"^  \d+: hit$", out.content, re.MULTILINE)
    assert len(shown) == 7
    assert "60 matching lines" in out.content
    assert "showing 7 in the top" in out.content


async def test_per_file_overflow_is_noted(tmp_path: Path) -> None:
    write(tmp_path, "big.txt", "hit\n" * 500)
    out = await grep(tmp_path, pattern="hit", max_results=20)
    assert "[… 480 more matching lines in this file]" in out.content


async def test_budget_drops_whole_files_with_a_note(tmp_path: Path) -> None:
    for n in range(40):
        write(tmp_path, f"f{n:02}.txt", "needle " + "x" * 100 + "\n")
    out = await handler(
        {"pattern": "needle", "max_results": 40},
        ctx_for(tmp_path, services=tool_budget("code_grep", 1500)),
    )
    assert len(out.content) <= 1500
    assert re.search(
        r"\[… \d+ more files \(\d+ characters\) left out to fit the 1500-character budget",
        out.content,
    )


async def test_long_lines_are_clipped(tmp_path: Path) -> None:
    write(tmp_path, "min.js", "needle" + "y" * 5000 + "\n")
    out = await grep(tmp_path, pattern="needle")
    assert "more characters]" in out.content
    assert len(out.content) < 1000


async def test_many_files_and_matches_are_counted_exactly(tmp_path: Path) -> None:
    # Large enough that rg's output arrives in many chunks with blocks split across them.
    for n in range(200):
        write(tmp_path, f"d{n % 7}/f{n}.py", "def match_me():\n" + "match_me()\n" * 40)
    out = await grep(tmp_path, pattern="match_me")
    assert out.metadata == {
        "matches": 200 * 41,
        "files": 200,
        "files_shown": out.metadata["files_shown"],
        "complete": True,
    }


async def test_non_utf8_content_is_shown_with_replacement(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9 needle\n")
    out = await grep(tmp_path, pattern="needle")
    assert "1: caf" in out.content and "needle" in out.content


async def test_cancellation_raises_cancelled(tmp_path: Path) -> None:
    write(tmp_path, "f.txt", "x\n")
    ctx = ctx_for(tmp_path)
    ctx.cancel.cancel("stop")
    with pytest.raises(Cancelled):
        await handler({"pattern": "x"}, ctx)


async def test_cancel_during_search(tmp_path: Path) -> None:
    for n in range(300):
        write(tmp_path, f"f{n}.txt", "needle\n" * 2000)
    ctx = ctx_for(tmp_path)
    task = asyncio.create_task(handler({"pattern": "needle"}, ctx))
    await asyncio.sleep(0.01)
    ctx.cancel.cancel("user")
    with pytest.raises(Cancelled):
        await task


def test_spec_shape() -> None:
    assert TOOL.name == "code_grep"
    assert TOOL.input_schema["required"] == ["pattern"]
    assert not TOOL.mutating
    for key, prop in TOOL.input_schema["properties"].items():
        assert prop.get("description"), key


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "missing required argument `pattern`"),
        ({"pattern": ""}, "`pattern` must not be empty"),
        ({"pattern": 5}, "`pattern` must be a string"),
        ({"pattern": "a\x00b"}, "NUL"),
        ({"pattern": "x", "colour": True}, "unknown argument `colour`"),
        ({"pattern": "x", "path": "../"}, "is outside the project root"),
        ({"pattern": "x", "path": "/etc"}, "is outside the project root"),
        ({"pattern": "x", "path": "nope"}, "`path` 'nope' does not exist"),
        ({"pattern": "x", "path": ".git"}, "inside .git"),
        ({"pattern": "x", "glob": 3}, "`glob` must be a string or a list"),
        ({"pattern": "x", "glob": ["*.py", ""]}, "`glob` entries must be non-empty"),
        ({"pattern": "x", "case_insensitive": "yes"}, "`case_insensitive` must be true or false"),
        ({"pattern": "x", "fixed_strings": 1}, "`fixed_strings` must be true or false"),
        ({"pattern": "x", "context": 11}, "`context` must be an integer between 0 and 10"),
        ({"pattern": "x", "context": "two"}, "`context` must be an integer"),
        ({"pattern": "x", "max_results": 0}, "`max_results` must be an integer between 1 and 1000"),
        ({"pattern": "x", "max_results": True}, "`max_results` must be an integer"),
    ],
)
async def test_bad_arguments(project: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        await handler(args, ctx_for(project))
    assert message in caught.value.message
    assert caught.value.message.startswith("code_grep: ")


async def test_arguments_must_be_an_object(project: Path) -> None:
    with pytest.raises(ToolError, match="arguments must be a JSON object"):
        await handler(["x"], ctx_for(project))  # type: ignore[arg-type]


async def test_invalid_regex_reports_rg_error(project: Path) -> None:
    with pytest.raises(ToolError) as caught:
        await grep(project, pattern="(unclosed")
    assert "regex parse error" in caught.value.message
    assert caught.value.code == "rg_failed"


async def test_symlink_escaping_the_root_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(ToolError, match="outside the project root"):
        await grep(root, pattern="x", path="link")


async def test_digit_strings_are_accepted_for_integers(project: Path) -> None:
    out = await grep(project, pattern="start_engine", max_results="2")
    assert len(re.findall(r"^  \d+: ", out.content, re.MULTILINE)) == 2


async def test_best_files_keep_their_lines_however_many_files_match(tmp_path: Path) -> None:
    # Only the top max_results files keep their lines while rg streams; the
    # winners must still be the best-ranked files, shown with their lines.
    for n in range(150):
        write(tmp_path, f"f{n:03}.txt", "token here\n")
    write(tmp_path, "z/deep/many.txt", "token again\n" * 30)
    write(tmp_path, "z/defines.py", "def token():\n    pass\n")
    out = await grep(tmp_path, pattern="token", max_results=2)
    assert file_headers(out.content) == ["z/defines.py", "z/deep/many.txt"]
    assert "  1: def token():" in out.content
    assert "  1: token again" in out.content
    assert out.metadata["matches"] == 150 + 30 + 1


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[RunningProcess]:
    """The rg processes code_grep starts, recorded as it starts them."""
    started: list[RunningProcess] = []
    real_spawn = grep_module.spawn

    @contextlib.asynccontextmanager
    async def recording_spawn(*args: Any, **kwargs: Any) -> AsyncIterator[RunningProcess]:
        async with real_spawn(*args, **kwargs) as running:
            started.append(running)
            yield running

    monkeypatch.setattr(grep_module, "spawn", recording_spawn)
    return started


def assert_gone(running: RunningProcess) -> None:
    """The child has exited and been reaped, and nothing of its process group is left."""
    assert running.proc.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(running.proc.pid, 0)  # a zombie would still answer
    with pytest.raises(ProcessLookupError):
        os.killpg(running.proc.pid, 0)


async def test_search_stops_at_the_match_cap_and_says_so(
    tmp_path: Path, spawned: list[RunningProcess]
) -> None:
    # About 2.5 MB of rg JSON: far more than a pipe holds, so rg is still
    # writing when the cap is reached and has to be stopped.
    for n in range(300):
        write(tmp_path, f"d{n % 9}/f{n:03}.txt", "".join(f"needle {i}\n" for i in range(40)))
    out = await search(
        TOOL.parse_arguments({"pattern": "needle"}), ctx_for(tmp_path), match_cap=500
    )
    # Whole files are counted, so the search stops after the file that reached
    # the cap: 13 files of 40 matching lines.
    assert out.metadata == {"matches": 520, "files": 13, "files_shown": 5, "complete": False}
    header, note = out.content.splitlines()[:2]
    assert header.startswith("520+ matching lines for 'needle' in 13+ files under the project")
    assert note.startswith("[Search stopped after 520 matching lines in 13 files (limit 500)")
    assert "Narrow the pattern, or pass 'path' or 'glob'" in note
    assert len(re.findall(r"^  \d+: needle", out.content, re.MULTILINE)) == 50
    assert len(spawned) == 1
    assert spawned[0].proc.returncode == -signal.SIGKILL
    assert_gone(spawned[0])


async def test_reaching_the_cap_with_nothing_left_is_complete(
    tmp_path: Path, spawned: list[RunningProcess]
) -> None:
    for n in range(10):
        write(tmp_path, f"f{n}.txt", "hit\n" * 5)
    out = await search(TOOL.parse_arguments({"pattern": "hit"}), ctx_for(tmp_path), match_cap=50)
    assert out.metadata["matches"] == 50
    assert out.metadata["complete"] is True
    assert "stopped" not in out.content
    assert out.content.startswith("50 matching lines for 'hit' in 10 files")
    assert spawned[0].proc.returncode == 0
    assert_gone(spawned[0])


async def test_per_file_count_stops_at_the_file_cap(tmp_path: Path) -> None:
    write(tmp_path, "big.txt", "hit\n" * 500)
    write(tmp_path, "small.txt", "hit\n" * 3)
    out = await search(
        TOOL.parse_arguments({"pattern": "hit", "max_results": 20}),
        ctx_for(tmp_path),
        file_match_cap=100,
    )
    lines = out.content.splitlines()
    assert lines[0].startswith("103+ matching lines for 'hit' in 2 files")
    assert lines[1] == (
        "[1 file reached 100 matching lines, where counting stops per file (shown as '100+'), "
        "so the total is a lower bound.]"
    )
    assert "big.txt (100+ matching lines)" in out.content
    assert "small.txt (3 matching lines)" in out.content
    assert "[… at least 90 more matching lines in this file]" in out.content
    assert out.metadata["matches"] == 103
    assert out.metadata["complete"] is False


def test_default_caps() -> None:
    # A single file can always fill the largest max_results.
    assert FILE_MATCH_CAP >= TOOL.input_schema["properties"]["max_results"]["maximum"]
    assert 10_000 <= MATCH_CAP <= 50_000


async def test_caps_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        await search(TOOL.parse_arguments({"pattern": "x"}), ctx_for(tmp_path), match_cap=0)
