"""Project identity: canonical origins, ids, and discovery in real git repositories.

The expected ids were computed outside Python with `printf %s CANONICAL | sha256sum | cut -c1-16`.
"""

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from smith_tui.store import StoreError, discover_project, project_id_for
from smith_tui.store.project_identity import normalize_origin

GITHUB = ("github.com/Owner/Repo", "2d3e4920e9b4fc89")
GITLAB = ("gitlab.example.com/group/sub/project", "fae3b79d452920a9")
LOCAL = ("/srv/git/tools", "6a31786810951e0a")

IDENTITY_TABLE = [
    ("git@github.com:Owner/Repo.git", *GITHUB),
    ("git@github.com:Owner/Repo", *GITHUB),
    ("github.com:Owner/Repo.git", *GITHUB),
    ("ssh://git@github.com/Owner/Repo.git", *GITHUB),
    ("ssh://git@GitHub.com:22/Owner/Repo.git/", *GITHUB),
    ("git+ssh://git@github.com/Owner/Repo.git", *GITHUB),
    ("https://github.com/Owner/Repo.git", *GITHUB),
    ("https://user:s3cr3t-token@github.com/Owner/Repo", *GITHUB),
    ("http://GITHUB.COM/Owner/Repo/", *GITHUB),
    ("https://github.com//Owner//Repo.git", *GITHUB),
    ("  https://github.com/Owner/Repo.git\n", *GITHUB),
    ("git://github.com/Owner/Repo.git", *GITHUB),
    ("https://github.com/owner/repo.git", "github.com/owner/repo", "620c3a937ce854b7"),
    ("https://oauth2:glpat-xyz@gitlab.example.com:8443/group/sub/project.git", *GITLAB),
    ("ssh://git@gitlab.example.com:2222/group/sub/project.git", *GITLAB),
    ("git@gitlab.example.com:group/sub/project.git", *GITLAB),
    ("forgejo@codeberg.org:alice/dotfiles.git", "codeberg.org/alice/dotfiles", "ade8adf6535ae970"),
    ("https://git.sr.ht/~bob/tool", "git.sr.ht/~bob/tool", "08334b9a5bbebf01"),
    ("git@git.sr.ht:~bob/tool", "git.sr.ht/~bob/tool", "08334b9a5bbebf01"),
    (
        "https://bitbucket.org/team/repo%20name.git",
        "bitbucket.org/team/repo name",
        "f693e362d8388480",
    ),
    ("file:///srv/git/tools.git", *LOCAL),
    ("file:///srv/git/tools/", *LOCAL),
    ("/srv/git/tools.git", *LOCAL),
    ("/srv/git/./tools", *LOCAL),
    ("../tools.git", *LOCAL),  # relative to the base /srv/git/work
]


@pytest.mark.parametrize(("origin", "canonical", "project_id"), IDENTITY_TABLE)
def test_identity_table(origin: str, canonical: str, project_id: str) -> None:
    assert normalize_origin(origin, base=Path("/srv/git/work")) == canonical
    assert project_id_for(canonical) == project_id


@pytest.mark.parametrize(
    ("origin", "error"),
    [
        ("", "non-empty"),
        ("   ", "non-empty"),
        ("https://github.com/", "no host or no repository path"),
        ("svn://example.com/repo", "unsupported scheme"),
    ],
)
def test_unusable_origins_are_clear_errors(origin: str, error: str) -> None:
    with pytest.raises(StoreError, match=error):
        normalize_origin(origin)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def sha256_prefix(text: str) -> str:
    """The id as the shell computes it, independent of the code under test."""
    out = subprocess.run(
        ["sh", "-c", 'printf %s "$1" | sha256sum', "sh", text],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out[:16]


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep git from seeing repositories above tmp_path or the user's git config."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def test_discover_in_a_repository_with_an_origin(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    (repo / "src" / "pkg").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "git@github.com:Owner/Repo.git")
    info = discover_project(repo / "src" / "pkg")
    assert info.root == repo.resolve()
    assert info.origin == "git@github.com:Owner/Repo.git"
    assert info.normalized_origin == "github.com/Owner/Repo"
    assert info.project_id == "2d3e4920e9b4fc89"
    assert info.in_git_repository


def test_two_checkouts_of_one_remote_share_an_id(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for repo, url in (
        (first, "https://github.com/Owner/Repo.git"),
        (second, "ssh://git@github.com:22/Owner/Repo"),
    ):
        repo.mkdir()
        git(repo, "init", "-q")
        git(repo, "remote", "add", "origin", url)
    assert (
        discover_project(first).project_id
        == discover_project(second).project_id
        == "2d3e4920e9b4fc89"
    )
    assert discover_project(first).root != discover_project(second).root


def test_a_repository_without_origin_uses_its_root(tmp_path: Path) -> None:
    repo = tmp_path / "local-only"
    (repo / "deep").mkdir(parents=True)
    git(repo, "init", "-q")
    info = discover_project(repo / "deep")
    assert info.root == repo.resolve()
    assert info.origin is None and info.normalized_origin is None
    assert info.project_id == sha256_prefix(str(repo.resolve()))
    assert info.in_git_repository


def test_a_local_path_origin(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream.git"
    git(tmp_path, "init", "-q", "--bare", str(upstream))
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", str(upstream), str(clone)], check=True, capture_output=True
    )
    info = discover_project(clone)
    expected = str(tmp_path.resolve() / "upstream")
    assert info.normalized_origin == expected
    assert info.project_id == sha256_prefix(expected)


def test_outside_any_repository_the_directory_is_the_root(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    info = discover_project(plain)
    assert info.root == plain.resolve()
    assert (info.origin, info.normalized_origin, info.in_git_repository) == (None, None, False)
    assert info.project_id == sha256_prefix(str(plain.resolve()))


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a directory"):
        discover_project(tmp_path / "nope")


def _recording_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a ``git`` first on PATH that logs its arguments, then runs the real one."""
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def test_outside_any_repository_no_git_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no .git in the folder or above, git's answer could not be the project root: the
    # discovery starts no process (a headless start outside a repository saved one spawn).
    log = _recording_git(tmp_path, monkeypatch)
    plain = tmp_path / "plain" / "deep"
    plain.mkdir(parents=True)
    info = discover_project(plain)
    assert info.root == plain.resolve() and not info.in_git_repository
    assert not log.exists()


def test_inside_a_repository_git_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control: in a repository git is asked (root and origin), through the same wrapper.
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "git@github.com:Owner/Repo.git")
    log = _recording_git(tmp_path, monkeypatch)
    info = discover_project(repo)
    assert info.in_git_repository and info.normalized_origin == "github.com/Owner/Repo"
    calls = log.read_text().splitlines()
    assert any("rev-parse --show-toplevel" in call for call in calls), calls
