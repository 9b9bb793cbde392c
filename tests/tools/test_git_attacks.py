"""Attempts to make the git tool write a file, run a program or change the repository.

The repository used here is hostile: its own .git/config points the pager,
fsmonitor, hooks, textconv and external-diff drivers, filter drivers, gpg and
ssh at scripts that leave a marker file when they run, and it holds a commit
with a (fake) signature so that signature checking would call gpg. A control
test shows that plain git really does run those scripts; the attack tests
show that the tool never does, refuses every dangerous request, and leaves
the repository byte-for-byte unchanged.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from smith_tui.tools.builtin.git import TOOL
from smith_tui.tools.spec import ToolContext, ToolError
from tests.support.tools import project_context
from tests.tools.test_git import commit_all, git

SCRIPT_NAMES = (
    "fsmonitor",
    "textconv",
    "extdiff",
    "external",
    "clean",
    "smudge",
    "process",
    "pager",
    "gpg",
    "ssh",
    "editor",
    "hook",
    "exec",
)

handler = TOOL.run  # validates like the executor, then runs the handler


class Hostile:
    """A hostile repository plus the folder its scripts drop markers into."""

    def __init__(self, base: Path) -> None:
        self.repo = base / "repo"
        self.markers = base / "markers"
        self.scripts = base / "scripts"
        self.outside = base / "outside"
        for folder in (self.repo, self.markers, self.scripts, self.outside):
            folder.mkdir(parents=True)
        for name in SCRIPT_NAMES:
            self.script(name)
        self._build()

    def script(self, name: str) -> Path:
        path = self.scripts / f"{name}.sh"
        path.write_text(
            "#!/bin/sh\n"
            f"touch '{self.markers}/{name}'\n"
            'if [ -n "$1" ] && [ -f "$1" ]; then cat "$1"; else cat; fi\n'
        )
        path.chmod(0o755)
        return path

    def _build(self) -> None:
        repo = self.repo
        git(repo, "init", "-q", "-b", "main")
        (repo / ".gitattributes").write_text("*.bin diff=x filter=fx\n*.y diff=y\n*.p filter=fp\n")
        (repo / "data.bin").write_text("one\n")
        (repo / "change.y").write_text("one\n")
        (repo / "proc.p").write_text("one\n")
        (repo / "plain.txt").write_text("one\n")
        commit_all(repo, "First")
        (repo / "plain.txt").write_text("one\ntwo\n")
        commit_all(repo, "Second")
        self._sign_head()
        hooks = self.scripts / "hooks"
        hooks.mkdir()
        for hook in ("post-index-change", "post-checkout", "pre-commit", "reference-transaction"):
            target = hooks / hook
            target.write_text(f"#!/bin/sh\ntouch '{self.markers}/hook'\n")
            target.chmod(0o755)
        s = self.scripts
        settings = {
            "core.fsmonitor": str(s / "fsmonitor.sh"),
            "core.pager": str(s / "pager.sh"),
            "pager.log": str(s / "pager.sh"),
            "pager.diff": str(s / "pager.sh"),
            "pager.show": str(s / "pager.sh"),
            "pager.blame": str(s / "pager.sh"),
            "pager.status": str(s / "pager.sh"),
            "core.hooksPath": str(hooks),
            "core.editor": str(s / "editor.sh"),
            "core.sshCommand": str(s / "ssh.sh"),
            "core.untrackedCache": "true",
            "diff.x.textconv": str(s / "textconv.sh"),
            "diff.y.command": str(s / "extdiff.sh"),
            "diff.external": str(s / "external.sh"),
            "filter.fx.clean": str(s / "clean.sh"),
            "filter.fx.smudge": str(s / "smudge.sh"),
            "filter.fx.required": "true",
            "filter.fp.process": str(s / "process.sh"),
            "gpg.program": str(s / "gpg.sh"),
            "log.showSignature": "true",
            "color.ui": "always",
        }
        for key, value in settings.items():
            git(repo, "config", key, value)
        # Dirty work tree: modified driver-backed files and a stat-only change,
        # so that status/diff want to run filters and refresh the index.
        (repo / "data.bin").write_text("one\nchanged\n")
        (repo / "change.y").write_text("one\nchanged\n")
        (repo / "proc.p").write_text("one\nchanged\n")
        os.utime(repo / "plain.txt", (1_000_000_000, 1_000_000_000))

    def _sign_head(self) -> None:
        """Replace HEAD with a copy carrying a fake PGP signature header."""
        body = git(self.repo, "cat-file", "commit", "HEAD")
        head, _, message = body.partition("\n\n")
        signature = (
            "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
            " -----END PGP SIGNATURE-----"
        )
        signed = f"{head}\n{signature}\n\n{message}"
        sha = subprocess.run(
            ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
            cwd=self.repo,
            input=signed,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"},
        ).stdout.strip()
        git(self.repo, "update-ref", "refs/heads/main", sha)

    def fired(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())

    def state(self) -> dict[str, tuple[str, int]]:
        """Hash and mtime of every file in the repository, .git included."""
        snapshot = {}
        for path in sorted(self.repo.rglob("*")):
            if path.is_file():
                data = path.read_bytes()
                snapshot[str(path.relative_to(self.repo))] = (
                    hashlib.sha256(data).hexdigest(),
                    path.stat().st_mtime_ns,
                )
        return snapshot


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    return Hostile(tmp_path)


def ctx_for(root: Path) -> ToolContext:
    return project_context(root, "orchestrator")


def plain_git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(
        ["git", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_control_the_repository_really_is_hostile(hostile: Hostile) -> None:
    """Without the tool's protections, ordinary read commands run the planted scripts."""
    index_before = (hostile.repo / ".git" / "index").read_bytes()
    plain_git(hostile.repo, "status")
    plain_git(hostile.repo, "diff")
    plain_git(hostile.repo, "log", "-1")
    plain_git(hostile.repo, "blame", "data.bin")
    fired = hostile.fired()
    for name in ("fsmonitor", "clean", "textconv", "external", "gpg", "hook"):
        assert name in fired, f"control: {name} did not run under plain git ({fired})"
    assert (hostile.repo / ".git" / "index").read_bytes() != index_before


# Requests that must be refused outright, before git runs. Paths that would be
# written or read are placed in the "outside" folder and checked afterwards.
def refused_requests(h: Hostile) -> list[tuple[str, Any]]:
    out = h.outside
    ext = str(h.scripts / "extdiff.sh")
    return [
        ("diff", ["--output=" + str(out / "diff.txt")]),
        ("log", ["--output", str(out / "log.txt")]),
        ("log", ["-p", "--output=" + str(out / "log2.txt"), "HEAD"]),
        ("show", ["--output-directory=" + str(out / "patches")]),
        ("show", ["-o", str(out / "patches2")]),
        ("diff", ["--ext-diff"]),
        ("log", ["-p", "--ext-diff"]),
        ("diff", ["--textconv"]),
        ("show", ["--textconv", "HEAD:data.bin"]),
        ("log", ["-c", f"core.pager={ext}"]),
        ("log", [f"-ccore.pager={ext}"]),
        ("log", ["--config-env=core.pager=PATH"]),
        ("log", [f"--exec={ext}"]),
        ("log", [f"--exec-path={h.scripts}"]),
        ("log", [f"--upload-pack={ext}"]),
        ("log", [f"--receive-pack={ext}"]),
        ("status", [f"--git-dir={out}"]),
        ("log", ["--work-tree=/"]),
        ("diff", ["-C", str(out)]),
        ("log", ["--namespace=evil"]),
        ("diff", ["--no-index", "/etc/hostname", "plain.txt"]),
        ("diff", ["/etc/hostname", "plain.txt"]),
        ("diff", ["--", "../outside/x"]),
        ("log", ["--open-files-in-pager=" + ext]),
        ("diff", ["-O" + str(out / "order")]),
        ("blame", ["--contents", "/etc/hostname", "plain.txt"]),
        ("blame", ["--ignore-revs-file=/etc/hostname", "plain.txt"]),
        ("blame", ["-S", "/etc/hostname", "plain.txt"]),
        ("log", ["--show-signature"]),
        ("log", ["--format=%G? %GS"]),
        ("log", ["--pretty=format:%GK"]),
        ("log", ["--remerge-diff"]),
        ("diff", ["--relative=../.."]),
        ("log", ["--end-of-options", "--output=" + str(out / "eoo.txt")]),
        ("log", ["--output=" + str(out / "sha-like.txt")]),
        ("log", ["HEAD\x00--output=" + str(out / "nul.txt")]),
        ("log", ["HEAD\n--output=" + str(out / "nl.txt")]),
        ("log", "--output=" + str(out / "string.txt")),
        ("log", [["--output", str(out / "nested.txt")]]),
        ("log", [{"--output": str(out / "dict.txt")}]),
        ("commit", ["-m", "x"]),
        ("push", []),
        ("config", ["core.pager", ext]),
        ("checkout", ["HEAD~1"]),
        ("gc", []),
        ("update-ref", ["refs/heads/main", "HEAD~1"]),
        ("stash", []),
        ("-c", ["core.pager=x", "log"]),
        ("--exec-path=/tmp", []),
        ("status", ["--ignore-submodules=none"]),
        ("diff", ["--submodule=diff"]),
    ]


async def test_dangerous_requests_are_all_refused(hostile: Hostile) -> None:
    before = hostile.state()
    requests = refused_requests(hostile)
    assert len(requests) >= 15
    for command, args in requests:
        with pytest.raises(ToolError) as caught:
            await handler({"command": command, "args": args}, ctx_for(hostile.repo))
        assert caught.value.code == "invalid_arguments", (command, args, caught.value.message)
    assert hostile.fired() == []
    assert list(hostile.outside.iterdir()) == []
    assert hostile.state() == before


# Requests the tool accepts: they run git against the hostile repository and
# must neither run any planted program nor write anything.
ALLOWED = [
    ("status", []),
    ("status", ["-sb", "--untracked-files=all"]),
    ("status", ["--porcelain=v2"]),
    ("diff", []),
    ("diff", ["--stat"]),
    ("diff", ["HEAD~1", "--", "data.bin"]),
    ("diff", ["--cached"]),
    ("diff", ["-w", "--word-diff"]),
    ("log", []),
    ("log", ["-p"]),
    ("log", ["--stat", "--format=fuller"]),
    ("show", []),
    ("show", ["HEAD:data.bin"]),
    ("show", ["HEAD~1", "--", "change.y"]),
    ("blame", ["data.bin"]),
    ("blame", ["proc.p"]),
    ("blame", ["HEAD", "--", "change.y"]),
]


async def test_allowed_commands_run_nothing_and_change_nothing(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = hostile.scripts
    # Hostile inherited environment as well: every one of these must be ignored.
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(s / "extdiff.sh"))
    monkeypatch.setenv("GIT_PAGER", str(s / "pager.sh"))
    monkeypatch.setenv("PAGER", str(s / "pager.sh"))
    monkeypatch.setenv("GIT_SSH_COMMAND", str(s / "ssh.sh"))
    monkeypatch.setenv("GIT_EDITOR", str(s / "editor.sh"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{s / 'fsmonitor.sh'}'")
    monkeypatch.setenv("GIT_TRACE", str(hostile.outside / "trace.txt"))
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(hostile.outside / "trace2.json"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(hostile.outside / "index"))
    before = hostile.state()
    index = hostile.repo / ".git" / "index"
    index_stat = index.stat()
    for command, args in ALLOWED:
        out = await handler({"command": command, "args": args}, ctx_for(hostile.repo))
        assert out.ok, (command, args)
        assert "\x1b[" not in out.content, "colour was forced by the repository config"
    assert hostile.fired() == []
    assert list(hostile.outside.iterdir()) == []
    assert index.stat().st_mtime_ns == index_stat.st_mtime_ns
    assert not (hostile.repo / ".git" / "index.lock").exists()
    after = hostile.state()
    assert after == before
    assert (
        plain_git(hostile.repo, "rev-parse", "HEAD").stdout
        == plain_git(hostile.repo, "rev-parse", "main").stdout
    )


async def test_textconv_and_filters_are_off_in_the_output(hostile: Hostile) -> None:
    """The diff shows raw content, not what a driver would have produced."""
    out = await handler({"command": "diff", "args": ["--", "data.bin"]}, ctx_for(hostile.repo))
    assert "+changed" in out.content
    assert hostile.fired() == []


async def test_status_does_not_refresh_the_index(hostile: Hostile) -> None:
    index = hostile.repo / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    for _ in range(3):
        await handler({"command": "status"}, ctx_for(hostile.repo))
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    # Plain git, by contrast, rewrites it (the stat-only change to plain.txt).
    plain_git(hostile.repo, "status")
    assert index.read_bytes() != before[0]
