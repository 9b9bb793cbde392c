"""Resolution beneath a root (tools/beneath.py) on real folders and symlinks.

Every test runs twice: with the ``openat2`` fast path and with the component walk forced.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from smith_tui.cancel import CancelToken
from smith_tui.tools import beneath
from smith_tui.tools.builtin import read
from smith_tui.tools.files import ToolPath, atomic_write
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import load_error, typed_config


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "walk":
        monkeypatch.setattr(beneath.OPENAT2, "enabled", False)
    elif not beneath.OPENAT2.enabled:
        pytest.skip("this kernel or machine has no openat2")
    yield str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = (tmp_path / "proj").resolve()
    (project / "a" / "b").mkdir(parents=True)
    (project / "a" / "b" / "f.txt").write_text("f\n")
    return project


def test_a_plain_path_ends_in_its_folder(root: Path, mode: str) -> None:
    with beneath.locate(root, "a/b/f.txt") as loc:
        assert (loc.folders, loc.name) == (("a", "b"), "f.txt")
        assert os.stat(loc.name, dir_fd=loc.dir_fd).st_size == 2
        assert loc.path == root / "a" / "b" / "f.txt"


def test_the_fast_path_is_one_openat2_call(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not beneath.OPENAT2.enabled:
        pytest.skip("this kernel or machine has no openat2")
    seen: list[str] = []
    real = beneath.OPENAT2.open_dir
    monkeypatch.setattr(
        beneath.OPENAT2, "open_dir", lambda fd, rel: seen.append(rel) or real(fd, rel)
    )
    beneath.locate(root, "a/b/f.txt").close()
    assert seen == ["a/b"]


def test_without_openat2_in_the_kernel_the_walk_takes_over(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = beneath._Openat2()
    missing.number = 999_999  # no such system call: ENOSYS, as on an old kernel
    missing.enabled = missing._syscall is not None
    monkeypatch.setattr(beneath, "OPENAT2", missing)
    with beneath.locate(root, "a/b/f.txt") as loc:
        assert loc.folders == ("a", "b")
    assert missing.enabled is False


def test_symlinks_inside_the_root_are_followed_and_named(root: Path, mode: str) -> None:
    (root / "rel").symlink_to("a/b")
    (root / "a" / "abs").symlink_to(root / "a" / "b")
    (root / "a" / "b" / "up").symlink_to("../b/f.txt")
    for rel in ("rel/f.txt", "a/abs/f.txt", "a/b/up", "rel/up", "a/abs/../b/f.txt"):
        with beneath.locate(root, rel) as loc:
            assert loc.names() == ("a", "b", "f.txt"), rel
    with beneath.locate(root, "a/b/up", follow=False) as loc:
        assert loc.name == "up"


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("abs", "/etc"),
        ("rel", "../.."),
        ("sneaky", "a/../../proj/a"),
        ("dots", "ROOT/../proj-twin"),
    ],
)
def test_symlinks_out_of_the_root_are_refused(
    root: Path, mode: str, name: str, target: str
) -> None:
    (root / name).symlink_to(target.replace("ROOT", str(root)))
    with pytest.raises(beneath.OutsideRootError) as caught:
        beneath.locate(root, f"{name}/passwd")
    assert caught.value.errno == errno.EXDEV
    with pytest.raises(beneath.OutsideRootError):
        beneath.locate(root, name)  # as the final entry, followed


def test_dotdot_never_climbs_above_the_root(root: Path, mode: str) -> None:
    with pytest.raises(beneath.OutsideRootError):
        beneath.locate(root, "a/../../proj/a/b/f.txt")
    with beneath.locate(root, "a/b/..") as loc:
        assert (loc.folders, loc.name) == ((), "a")
    with beneath.locate(root, "") as loc:
        assert loc.name == "."


def test_a_symlink_loop_ends_with_eloop(root: Path, mode: str) -> None:
    (root / "p").symlink_to("q")
    (root / "q").symlink_to("p")
    with pytest.raises(OSError) as caught:
        beneath.locate(root, "p/x")
    assert caught.value.errno == errno.ELOOP


def test_create_makes_missing_folders_and_names_a_file_in_the_way(root: Path, mode: str) -> None:
    with beneath.locate(root, "n/e/w.txt", create=True) as loc:
        assert loc.folders == ("n", "e")
    assert (root / "n" / "e").is_dir()
    with pytest.raises(NotADirectoryError) as caught:
        beneath.locate(root, "a/b/f.txt/child", create=True)
    assert caught.value.filename == "a/b/f.txt"
    with pytest.raises(FileNotFoundError) as missing:
        beneath.locate(root, "no/such/file")
    assert missing.value.filename == "no"


def test_follow_links_false_refuses_any_symlinked_folder(root: Path, mode: str) -> None:
    (root / "rel").symlink_to("a")
    with pytest.raises(beneath.SymlinkOnTheWayError):
        beneath.locate(root, "rel/b/f.txt", follow_links=False)


def test_a_nul_byte_is_an_oserror_not_a_valueerror(root: Path, mode: str) -> None:
    with pytest.raises(OSError) as caught:
        beneath.locate(root, "a/b\x00/f.txt")
    assert caught.value.errno == errno.EINVAL


def _ctx(root: Path, config: dict[str, object] | None = None) -> ToolContext:
    return ToolContext(
        role="worker",
        turn_id="t",
        cwd=root,
        cancel=CancelToken.new_root(),
        project_root=root,
        config=typed_config(config),
    )


async def test_a_nul_byte_in_a_path_or_extra_root_is_refused(
    root: Path, mode: str, tmp_path: Path
) -> None:
    with pytest.raises(ToolError) as caught:
        await read.TOOL.run({"path": "a/b\x00/f.txt"}, _ctx(root))
    assert caught.value.code == "bad_path"
    # An extra root with a NUL is refused when the config is loaded, before any tool runs.
    message = load_error(tmp_path, {"services": {"tool": {"extra_roots": ["/tmp/x\x00y"]}}})
    assert "services.tool.extra_roots[0]: must not contain a NUL character" in message


def test_writing_through_a_folder_that_leads_into_dot_git_is_refused(root: Path, mode: str) -> None:
    # realpath saw a plain folder "cfg"; by the time of the write it is a symlink into
    # .git. The names walked, not the checked string, decide.
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "cfg").symlink_to(".git")
    target = ToolPath(root / "cfg" / "config", root / "cfg" / "config", root, "cfg/config")
    with pytest.raises(ToolError) as caught:
        atomic_write(target, b"[alias]\n", tool="write")
    assert caught.value.code == "git_internal"
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert sorted(os.listdir(root / ".git")) == ["config"]


def test_writing_through_a_folder_now_leading_out_is_refused(
    root: Path, tmp_path: Path, mode: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "d").symlink_to(outside)
    target = ToolPath(root / "d" / "x.txt", root / "d" / "x.txt", root, "d/x.txt")
    with pytest.raises(ToolError) as caught:
        atomic_write(target, b"x", tool="write")
    assert caught.value.code == "outside_project"
    assert os.listdir(outside) == []
