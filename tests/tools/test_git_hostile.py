"""Hostile repositories that try to get around the git tool's promises.

Each repository is built in a temporary folder and plants a program that
leaves a marker file when it runs, or a secret outside the project that must
never show up in a result:

* partial clones whose promisor remote is reached through ``ext::`` (as a URL
  or as ``remote.<name>.vcs``), a local ``uploadpack`` program,
  ``core.gitProxy`` or an HTTP credential helper, with the repository's own
  ``protocol.<name>.allow=always`` (which beats a generic
  ``protocol.allow=never``) -- a missing object must be an error, never a fetch;
* ``core.fsmonitor`` set to a program;
* ``core.worktree`` moving the work tree out of the project, a ``.git`` file,
  symlink or ``commondir`` leading to a repository elsewhere -- also for
  project discovery;
* ``~`` and ``:`` paths (pathspec magic, ``rev:path`` lookups) leaving the project;
* config includes and file settings (``core.excludesFile``, ``core.attributesFile``,
  ``mailmap.file``, ``diff.orderFile``) naming a FIFO outside the project, whose
  writer shows whether anything ever opened it.

Control tests show that git with only the tool's former defences really does
run each planted program or read each secret.
"""

from __future__ import annotations

import asyncio
import http.server
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smith_tui.store import discover_project
from smith_tui.tools.builtin import git as git_tool
from smith_tui.tools.builtin import git_repository
from smith_tui.tools.builtin.git import TOOL
from smith_tui.tools.builtin.git_argv import build_command
from smith_tui.tools.safe_git import SAFE_CONFIG, ConfigOverrides
from smith_tui.tools.spec import ToolError
from tests.tools.test_git import commit_all, git, make_repo
from tests.tools.test_git_attacks import ctx_for, plain_git

SECRET = "SECRET-outside-the-project"

handler = TOOL.run  # validates like the executor, then runs the handler


class Planted:
    """A base folder with planted scripts and the folder they drop markers into."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.markers = base / "markers"
        self.scripts = base / "scripts"
        self.markers.mkdir()
        self.scripts.mkdir()

    def script(self, name: str) -> Path:
        """A program that leaves the marker ``name`` and fails."""
        path = self.scripts / f"{name}.sh"
        path.write_text(f"#!/bin/sh\ntouch '{self.markers}/{name}'\nexit 1\n")
        path.chmod(0o755)
        return path

    def fired(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())


@pytest.fixture
def planted(tmp_path: Path) -> Planted:
    return Planted(tmp_path)


@pytest.fixture
def unauthorised_server() -> Iterator[str]:
    """An HTTP server that answers every request with 401, so git asks for credentials."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="hostile"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/repo.git"
    finally:
        server.shutdown()
        server.server_close()


# ----------------------------------------------------------------------------- partial clones


def partial_clone(planted: Planted, attack: str, http_url: str = "") -> Path:
    """A partial clone whose newest blob of f.txt is missing and whose promisor is hostile."""
    repo = planted.base / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "f.txt").write_text("one\n")
    commit_all(repo, "First")
    (repo / "f.txt").write_text("one\ntwo\n")
    commit_all(repo, "Second")
    blob = git(repo, "rev-parse", "HEAD:f.txt").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    # A changed work-tree file, so that blame needs the committed blob (not the file).
    (repo / "f.txt").write_text("one\ntwo\nthree\n")
    settings = {
        "core.repositoryformatversion": "1",
        "extensions.partialClone": "origin",
        "remote.origin.promisor": "true",
    }
    if attack == "ext":
        settings["remote.origin.url"] = f"ext::{planted.script('ext')}"
        settings["protocol.ext.allow"] = "always"
    elif attack == "vcs":  # remote helper chosen by remote.<name>.vcs: git-remote-ext
        settings["remote.origin.vcs"] = "ext"
        settings["remote.origin.url"] = str(planted.script("vcs"))
        settings["protocol.ext.allow"] = "always"
    elif attack == "uploadpack":
        other = planted.base / "other"
        make_repo(other)
        settings["remote.origin.url"] = str(other)
        settings["remote.origin.uploadpack"] = str(planted.script("uploadpack"))
        settings["protocol.file.allow"] = "always"
    elif attack == "gitproxy":
        settings["remote.origin.url"] = "git://127.0.0.1:9/repo.git"
        settings["core.gitProxy"] = str(planted.script("gitproxy"))
        settings["protocol.git.allow"] = "always"
    elif attack == "credential":
        settings["remote.origin.url"] = http_url
        settings["credential.helper"] = f"!{planted.script('credential')}"
        settings[f"credential.{http_url}.helper"] = f"!{planted.script('credential-for-url')}"
        settings["protocol.http.allow"] = "always"
    for key, value in settings.items():
        git(repo, "config", key, value)
    return repo


ATTACKS = ("ext", "vcs", "uploadpack", "gitproxy", "credential")
NEEDS_MISSING_BLOB = (
    ("diff", ["HEAD~1", "HEAD"]),
    ("log", ["-p"]),
    ("show", ["HEAD:f.txt"]),
    ("blame", ["f.txt"]),
)


@pytest.mark.parametrize("attack", ATTACKS)
def test_control_lazy_fetch_runs_the_planted_program(
    planted: Planted, attack: str, unauthorised_server: str
) -> None:
    """Plain git, even with protocol.allow=never, runs it to fetch the missing blob."""
    repo = partial_clone(planted, attack, unauthorised_server)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    done = subprocess.run(
        ["git", "-c", "protocol.allow=never", "show", "HEAD:f.txt"],
        cwd=repo,
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode != 0
    expected = [attack, "credential-for-url"] if attack == "credential" else [attack]
    assert planted.fired() == expected


@pytest.mark.parametrize("attack", ATTACKS)
async def test_a_missing_object_is_an_error_not_a_fetch(
    planted: Planted, attack: str, unauthorised_server: str
) -> None:
    repo = partial_clone(planted, attack, unauthorised_server)
    errors = []
    for command, args in NEEDS_MISSING_BLOB:
        with pytest.raises(ToolError) as caught:
            await handler({"command": command, "args": args}, ctx_for(repo))
        errors.append(caught.value)
    assert planted.fired() == []
    for error in errors:
        assert error.code == "git_failed", error.message
        assert "partial clone" in error.message and "never fetches" in error.message
    # What is present locally still works.
    out = await handler({"command": "log", "args": ["--format=%s"]}, ctx_for(repo))
    assert out.content.split() == ["Second", "First"]


# Each defence against lazy fetching, and the message git gives when only it is left.
LAYERS = {
    "no-lazy-fetch": "lazy fetching disabled",  # GIT_NO_LAZY_FETCH (git 2.39.4+, 2.45+)
    "allow-list": "transport 'ext' not allowed",  # GIT_ALLOW_PROTOCOL (git 2.6.1+)
    "protocol-config": "transport 'ext' not allowed",  # protocol.ext.allow=never
}


@pytest.mark.parametrize("layer", list(LAYERS))
async def test_each_lazy_fetch_defence_holds_on_its_own(
    planted: Planted, layer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the other two defences taken away, each one alone still stops the fetch."""
    repo = partial_clone(planted, "ext")
    original_env, original_overrides = git_repository.git_env, git_tool.repository_overrides
    dropped = {"GIT_NO_LAZY_FETCH", "GIT_ALLOW_PROTOCOL"}
    if layer == "no-lazy-fetch":
        dropped = {"GIT_ALLOW_PROTOCOL"}
    elif layer == "allow-list":
        dropped = {"GIT_NO_LAZY_FETCH"}

    def fewer_variables(*args: Any) -> dict[str, str]:
        env = original_env(*args)
        return {key: value for key, value in env.items() if key not in dropped}

    async def fewer_overrides(*args: Any) -> ConfigOverrides:
        found = await original_overrides(*args)
        pairs = [pair for pair in found.pairs if not pair[0].startswith("protocol.")]
        return ConfigOverrides(pairs, found.partial_clone)

    monkeypatch.setattr(git_repository, "git_env", fewer_variables)
    if layer != "protocol-config":
        monkeypatch.setattr(git_tool, "repository_overrides", fewer_overrides)
    with pytest.raises(ToolError) as caught:
        await handler({"command": "show", "args": ["HEAD:f.txt"]}, ctx_for(repo))
    assert LAYERS[layer] in caught.value.message
    assert planted.fired() == []


# ----------------------------------------------------------------------------- fsmonitor


async def test_fsmonitor_program_never_runs(planted: Planted, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "core.fsmonitor", str(planted.script("fsmonitor")))
    (repo / "docs.txt").write_text("changed\n")
    plain_git(repo, "status")
    assert planted.fired() == ["fsmonitor"], "control: plain git runs the fsmonitor hook"
    (planted.markers / "fsmonitor").unlink()
    for command in ("status", "diff"):
        out = await handler({"command": command, "args": []}, ctx_for(repo))
        assert "docs.txt" in out.content
    assert planted.fired() == []


def test_fsmonitor_is_off_by_the_empty_value() -> None:
    """git before 2.36 reads core.fsmonitor=false as a hook program named 'false'."""
    assert dict(SAFE_CONFIG)["core.fsmonitor"] == ""


# ----------------------------------------------------------------------------- work tree and repository


def secret_beside(repo: Path) -> None:
    """Files in the folder above the project: a secret and a look-alike of a tracked file."""
    (repo.parent / "secret.txt").write_text(SECRET + "\n")
    (repo.parent / "README.md").write_text(SECRET + "\n")


async def test_core_worktree_cannot_move_the_work_tree_up(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    secret_beside(repo)
    git(repo, "config", "core.worktree", str(repo.parent))
    control = plain_git(repo, "diff").stdout + plain_git(repo, "status", "-uall").stdout
    assert SECRET in control and "secret.txt" in control, "control: plain git reads the parent"
    requests = [
        ("status", ["--untracked-files=all"]),
        ("diff", []),
        ("log", ["-p", "--stat"]),
        ("blame", ["README.md"]),
        ("show", ["HEAD:README.md"]),
    ]
    outputs = []
    for command, args in requests:
        out = await handler({"command": command, "args": args}, ctx_for(repo))
        assert SECRET not in out.content and "secret.txt" not in out.content, command
        outputs.append(out.content)
    assert "nothing to commit" in outputs[0]
    assert "# Demo" in outputs[3]  # blame read the project's own README.md


async def test_core_worktree_elsewhere_is_pinned_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "README.md").write_text(SECRET + "\n")
    git(repo, "config", "core.worktree", str(elsewhere))
    (repo / "docs.txt").write_text("notes\nmore\n")
    out = await handler({"command": "diff", "args": []}, ctx_for(repo))
    assert "+more" in out.content
    assert SECRET not in out.content and "README.md" not in out.content


def other_repository(path: Path) -> Path:
    """A repository outside the project whose history holds the secret."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "secret.txt").write_text(SECRET + "\n")
    commit_all(path, "Private history")
    return path


async def test_a_git_file_leading_to_another_repository_is_refused(tmp_path: Path) -> None:
    other = other_repository(tmp_path / "private")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").write_text(f"gitdir: {other / '.git'}\n")
    control = plain_git(project, "log", "-p").stdout
    assert SECRET in control, "control: plain git reads the other repository"
    for command, args in (("log", ["-p"]), ("status", []), ("show", ["HEAD:secret.txt"])):
        with pytest.raises(ToolError) as caught:
            await handler({"command": command, "args": args}, ctx_for(project))
        assert caught.value.code == "not_a_repository"
        assert "outside the project" in caught.value.message
        assert SECRET not in caught.value.message


async def test_a_git_symlink_to_another_repository_is_refused(tmp_path: Path) -> None:
    other = other_repository(tmp_path / "private")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").symlink_to(other / ".git")
    assert SECRET in plain_git(project, "log", "-p").stdout, "control: plain git follows it"
    with pytest.raises(ToolError) as caught:
        await handler({"command": "log", "args": ["-p"]}, ctx_for(project))
    assert caught.value.code == "not_a_repository"
    assert SECRET not in caught.value.message


async def test_a_commondir_leading_to_another_repository_is_refused(tmp_path: Path) -> None:
    other = other_repository(tmp_path / "private")
    project = make_repo(tmp_path / "project")
    (project / ".git" / "commondir").write_text(f"{other / '.git'}\n")
    control = plain_git(project, "log", "-p").stdout
    assert SECRET in control, "control: plain git reads the other repository"
    with pytest.raises(ToolError) as caught:
        await handler({"command": "log", "args": ["-p"]}, ctx_for(project))
    assert caught.value.code == "not_a_repository"
    assert str(other / ".git") in caught.value.message


async def test_alternates_leading_to_another_repository_are_refused(tmp_path: Path) -> None:
    other = other_repository(tmp_path / "private")
    secret_blob = plain_git(other, "rev-parse", "HEAD:secret.txt").stdout.strip()
    project = make_repo(tmp_path / "project")
    info = project / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{other / '.git' / 'objects'}\n")
    assert SECRET in plain_git(project, "show", secret_blob).stdout, "control: git borrows it"
    with pytest.raises(ToolError) as caught:
        await handler({"command": "show", "args": [secret_blob]}, ctx_for(project))
    assert caught.value.code == "not_a_repository"
    assert "borrows objects" in caught.value.message
    assert SECRET not in caught.value.message


async def test_alternates_inside_the_project_are_accepted(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "project")
    inner = project / "vendor" / "objects"
    inner.mkdir(parents=True)
    info = project / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"# a comment\n{inner}\n")
    result = await handler({"command": "log", "args": ["--oneline"]}, ctx_for(project))
    assert result.content.strip()


async def test_linked_worktrees_and_submodules_still_work(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "docs.txt").write_text("notes\nfrom the linked worktree\n")
    out = await handler({"command": "diff", "args": []}, ctx_for(linked))
    assert "+from the linked worktree" in out.content
    outer = make_repo(tmp_path / "outer")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(main), "sub")
    sub = outer / "sub"
    (sub / "README.md").write_text("# Demo\nfrom the submodule\n")
    out = await handler({"command": "diff", "args": []}, ctx_for(sub))
    assert "+from the submodule" in out.content
    log = await handler({"command": "log", "args": ["--format=%s", "-1"]}, ctx_for(sub))
    assert log.content.strip() == "Add docs"


def test_discovery_ignores_a_work_tree_moved_by_core_worktree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert discover_project(repo / "src").root == repo
    git(repo, "config", "core.worktree", str(tmp_path))
    assert plain_git(repo, "rev-parse", "--show-toplevel").stdout.strip() == str(tmp_path)
    for start in (repo, repo / "src"):
        info = discover_project(start)
        assert info.root == start
        assert not info.in_git_repository
    git(repo, "config", "core.worktree", str(tmp_path / "elsewhere"))
    assert discover_project(repo).root == repo


def test_discovery_keeps_worktrees_and_git_files(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "side", str(linked))
    info = discover_project(linked)
    assert info.root == linked and info.in_git_repository


# ----------------------------------------------------------------------------- ~ and : paths


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "home" / "repo")


@pytest.mark.parametrize(
    "arg",
    [
        "~",
        "~/.ssh/id_rsa",
        "~/repo/../other",
        ":/../outside",
        ":(top)../outside",
        ":(icase)../outside",
        ":(exclude)../outside",
        ":!../outside",
        ":^../outside",
        ":/!../outside",
        ":../outside",
        ":0:../outside",
        "HEAD:../outside",
        "HEAD:./../outside",
        "HEAD:src/../../outside",
        "main@{10:00}:../outside",
        "/etc/passwd",
    ],
)
async def test_tilde_and_colon_paths_that_leave_the_project_are_refused(
    repo: Path, arg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(repo.parent))
    for args in ([arg], ["--", arg]):
        with pytest.raises(ToolError) as caught:
            await handler({"command": "log", "args": args}, ctx_for(repo))
        assert caught.value.code == "invalid_arguments"
        assert "outside the project root" in caught.value.message


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (":(attr:diff)src", "pathspec magic 'attr:diff' in ':(attr:diff)src' is not supported"),
        (":(prefix:0)x", "pathspec magic 'prefix:0'"),
        (":(top", "has no ')' closing its magic words"),
    ],
)
def test_unsupported_pathspec_magic_is_refused(repo: Path, arg: str, message: str) -> None:
    with pytest.raises(ToolError) as caught:
        build_command("log", ["--", arg], repo)
    assert message in caught.value.message


async def test_tilde_inside_the_project_is_expanded_for_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(repo.parent))
    assert build_command("log", ["--", "~/repo/src"], repo)[-1] == str(repo / "src")
    out = await handler(
        {"command": "log", "args": ["--format=%s", "--", "~/repo/src/app.py"]}, ctx_for(repo)
    )
    assert out.content.splitlines() == ["Change main and add helper", "Initial commit"]
    # A name git would read literally (no such user) stays a path in the project.
    assert build_command("log", ["--", "~nosuchuser-smith/x"], repo)[-1] == "~nosuchuser-smith/x"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--", ":/src"], ["Change main and add helper", "Initial commit"]),
        (["--", ":(top)docs.txt"], ["Add docs"]),
        (["--", ":(icase)SRC/APP.PY"], ["Change main and add helper", "Initial commit"]),
        (["--", ":(glob)**/*.py"], ["Change main and add helper", "Initial commit"]),
        (["--", ".", ":(exclude)src"], ["Add docs", "Initial commit"]),
        (["--", ".", ":!src"], ["Add docs", "Initial commit"]),
        (["--", ":/"], ["Add docs", "Change main and add helper", "Initial commit"]),
    ],
)
async def test_safe_pathspec_magic_works(repo: Path, args: list[str], expected: list[str]) -> None:
    out = await handler({"command": "log", "args": ["--format=%s", *args]}, ctx_for(repo))
    assert out.content.splitlines() == expected


async def test_colon_lookups_inside_the_project_work(repo: Path) -> None:
    blob = await handler({"command": "show", "args": ["HEAD~2:src/app.py"]}, ctx_for(repo))
    assert blob.content == "def main():\n    return 1\n"
    index = await handler({"command": "show", "args": [":docs.txt"]}, ctx_for(repo))
    assert index.content == "notes\n"
    staged = await handler({"command": "show", "args": [":0:./docs.txt"]}, ctx_for(repo))
    assert staged.content == "notes\n"


async def test_top_relative_forms_are_checked_against_a_subfolder_root(repo: Path) -> None:
    """With the project in src/, ':/' and 'rev:path' are relative to the repository top."""
    src = repo / "src"
    for arg in (":/", ":/README.md", ":(top)docs.txt", "HEAD:README.md", ":docs.txt"):
        with pytest.raises(ToolError, match="outside the project root"):
            await handler({"command": "log", "args": ["--", arg]}, ctx_for(src))
    for command, arg in (("show", "HEAD:src/app.py"), ("show", "HEAD:./app.py")):
        out = await handler({"command": command, "args": [arg]}, ctx_for(src))
        assert out.content.startswith("def main():"), arg
    out = await handler({"command": "log", "args": ["--format=%s", "--", ":/src"]}, ctx_for(src))
    assert out.content.splitlines() == ["Change main and add helper", "Initial commit"]


def test_control_git_does_not_expand_tilde(repo: Path) -> None:
    """Why the tool expands it: git would look for a folder literally named '~'."""
    done = subprocess.run(
        ["git", "log", "--format=%s", "--", "~/repo/src"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(repo.parent), "GIT_CONFIG_GLOBAL": "/dev/null"},
        check=False,
    )
    assert done.returncode == 0 and done.stdout == ""


# ----------------------------------------------------------------------------- files read through config


class FifoWatch:
    """A FIFO outside the project with a writer waiting for a reader.

    The writer's ``open`` only returns once something opens the FIFO to read,
    so ``opened`` tells whether any process ever did; a reader with no writer
    would block, so a tool that followed it would hang.
    """

    def __init__(self, path: Path, content: str = "[user]\n\tname = fifo\n") -> None:
        self.path = path
        os.mkfifo(path)
        self.opened = threading.Event()
        self._stop = threading.Event()
        self._content = content
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        # Serve every reader (git may open the file more than once) until released.
        while not self._stop.is_set():
            try:
                with open(self.path, "w") as pipe:
                    if self._stop.is_set():
                        return
                    self.opened.set()
                    pipe.write(self._content)
            except OSError:
                pass

    def release(self) -> None:
        """Stop serving: open the FIFO ourselves so that the waiting writer wakes up."""
        self._stop.set()
        reader = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self._thread.join(5)
        os.close(reader)


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[FifoWatch]:
    watch = FifoWatch(tmp_path / "outside.fifo")
    yield watch
    watch.release()


def add_config(repo: Path, text: str) -> None:
    """Append raw text to the repository's config (``git config`` itself follows includes)."""
    with open(repo / ".git" / "config", "a") as config:
        config.write(text)


def include_sections(repo: Path, target: Path) -> dict[str, str]:
    return {
        "include.path": f'[include]\n\tpath = "{target}"\n',
        "includeIf.gitdir": f'[includeIf "gitdir:{repo}/"]\n\tpath = "{target}"\n',
    }


@pytest.mark.parametrize("kind", ["include.path", "includeIf.gitdir"])
def test_control_git_follows_config_includes(tmp_path: Path, fifo: FifoWatch, kind: str) -> None:
    repo = make_repo(tmp_path / "repo")
    add_config(repo, include_sections(repo, fifo.path)[kind])
    done = plain_git(repo, "config", "user.name")
    assert fifo.opened.is_set() and done.stdout.strip() == "fifo"


@pytest.mark.parametrize("kind", ["include.path", "includeIf.gitdir"])
async def test_config_includes_are_refused_without_being_read(
    tmp_path: Path, fifo: FifoWatch, kind: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    add_config(repo, include_sections(repo, fifo.path)[kind])
    for command in ("status", "log", "diff"):
        with pytest.raises(ToolError) as caught:
            # Following the include would block on the FIFO (no writer opens it
            # until a reader does); the guard only stops a hang, it is not a timing.
            await asyncio.wait_for(handler({"command": command, "args": []}, ctx_for(repo)), 30)
        assert caught.value.code == "git_failed"
        assert "does not follow config includes" in str(caught.value)
        assert str(fifo.path) in str(caught.value) and kind.split(".")[0].lower() in str(
            caught.value
        )
    assert not fifo.opened.is_set()


async def test_an_include_of_a_regular_file_outside_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside.cfg"
    outside.write_text("[core]\n\tpager = cat\n")
    add_config(repo, "[include]\n\tpath = ../../outside.cfg\n")
    with pytest.raises(ToolError) as caught:
        await handler({"command": "status", "args": []}, ctx_for(repo))
    assert "include.path = ../../outside.cfg" in str(caught.value)
    assert caught.value.code == "git_failed"


def test_discovery_reads_no_include(tmp_path: Path, fifo: FifoWatch) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", "https://example.com/Owner/Repo.git")
    before = discover_project(repo / "src")
    add_config(repo, include_sections(repo, fifo.path)["include.path"])
    info = discover_project(repo / "src")
    assert not fifo.opened.is_set()
    assert info == before
    assert info.root == repo and info.in_git_repository
    assert info.normalized_origin == "example.com/Owner/Repo"


# Each config key names a file git reads for that command; the tool overrides all of them.
FILE_SETTINGS = [
    ("core.excludesFile", ["status", "--short"]),
    ("core.attributesFile", ["diff", "HEAD~1"]),
    ("mailmap.file", ["log", "-1"]),
    ("diff.orderFile", ["diff", "HEAD~1"]),
]


@pytest.mark.parametrize(("key", "command"), FILE_SETTINGS)
def test_control_git_reads_files_named_by_config(
    tmp_path: Path, fifo: FifoWatch, key: str, command: list[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", key, str(fifo.path))
    done = plain_git(repo, *command)
    # The writer thread marks the open once it runs again: git may be done before that.
    assert fifo.opened.wait(10), done.stderr


@pytest.mark.parametrize(("key", "command"), FILE_SETTINGS)
async def test_files_named_by_config_outside_are_not_read(
    tmp_path: Path, fifo: FifoWatch, key: str, command: list[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "notes.tmp").write_text("x\n")
    (repo / ".gitignore").write_text("*.tmp\n")
    git(repo, "config", key, str(fifo.path))
    out = await asyncio.wait_for(
        handler({"command": command[0], "args": command[1:]}, ctx_for(repo)), 30
    )
    assert not fifo.opened.is_set()
    assert out.content.strip()
    if command[0] == "status":
        assert ".gitignore" in out.content and "notes.tmp" not in out.content
