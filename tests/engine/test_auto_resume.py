"""Auto-resume and `--continue` are per project: one database, several repositories."""

from __future__ import annotations

from pathlib import Path

from smith_tui.engine.runtime import Runtime
from smith_tui.store import Store
from tests.support.runtime import make_git_repo, open_runtime

NO_SERVER = "http://127.0.0.1:9/v1"  # nothing here sends a request


def _open(tmp_path: Path, repo: Path, **options: object) -> Runtime:
    runtime, _ = open_runtime(tmp_path, NO_SERVER, cwd=repo, **options)
    return runtime


def _started_in(tmp_path: Path, repo: Path) -> tuple[str, str]:
    """Start the app's way (auto-resume) in `repo`; return (conversation id, project id)."""
    runtime = _open(tmp_path, repo, auto_resume=True)
    try:
        return runtime.conversations.ensure(), runtime.project_id
    finally:
        runtime.store.close()


def test_starting_in_another_project_never_resumes_this_one(tmp_path: Path) -> None:
    repo_a = make_git_repo(tmp_path / "a", origin="https://example.com/acme/a.git")
    repo_b = make_git_repo(tmp_path / "b", origin="https://example.com/acme/b.git")
    plain = tmp_path / "no-git"
    plain.mkdir()

    conv_a, project_a = _started_in(tmp_path, repo_a)
    conv_b, project_b = _started_in(tmp_path, repo_b)
    assert project_a != project_b
    assert conv_b != conv_a
    conv_plain, project_plain = _started_in(tmp_path, plain)  # a folder without git has an id
    assert project_plain not in (project_a, project_b)
    assert conv_plain not in (conv_a, conv_b)

    assert _started_in(tmp_path, repo_a) == (conv_a, project_a)
    assert _started_in(tmp_path, repo_b) == (conv_b, project_b)
    assert _started_in(tmp_path, plain) == (conv_plain, project_plain)
    with Store.open(tmp_path / "smith.db") as store:
        assert {c.id: c.project_id for c in store.conversations.list_all()} == {
            conv_a: project_a,
            conv_b: project_b,
            conv_plain: project_plain,
        }


def test_opening_a_foreign_conversation_does_not_make_it_this_projects(tmp_path: Path) -> None:
    repo_a = make_git_repo(tmp_path / "a", origin="https://example.com/acme/a.git")
    repo_b = make_git_repo(tmp_path / "b", origin="https://example.com/acme/b.git")
    conv_a, _ = _started_in(tmp_path, repo_a)
    conv_b, _ = _started_in(tmp_path, repo_b)
    assert conv_b != conv_a

    runtime = _open(tmp_path, repo_b)
    try:
        runtime.conversations.load(conv_a)  # /history or --resume across projects is allowed
    finally:
        runtime.store.close()
    assert _started_in(tmp_path, repo_b)[0] == conv_b
    assert _started_in(tmp_path, repo_a)[0] == conv_a


def test_the_key_older_versions_shared_resumes_only_in_its_own_project(tmp_path: Path) -> None:
    repo_a = make_git_repo(tmp_path / "a", origin="https://example.com/acme/a.git")
    repo_b = make_git_repo(tmp_path / "b", origin="https://example.com/acme/b.git")
    runtime = _open(tmp_path, repo_a)
    try:
        conv_a = runtime.store.conversations.create(runtime.project_id)
        runtime.store.meta.set_active_conversation_id(conv_a)  # the one global key of old
    finally:
        runtime.store.close()

    assert _started_in(tmp_path, repo_b)[0] != conv_a
    assert _started_in(tmp_path, repo_a)[0] == conv_a


def test_continue_takes_the_latest_conversation_of_this_project(tmp_path: Path) -> None:
    repo_a = make_git_repo(tmp_path / "a", origin="https://example.com/acme/a.git")
    repo_b = make_git_repo(tmp_path / "b", origin="https://example.com/acme/b.git")
    conv_a, _ = _started_in(tmp_path, repo_a)

    runtime = _open(tmp_path, repo_b)
    try:
        assert (
            runtime.conversations.continue_latest() is None
        )  # B has none; A's is newer but not B's
        conv_b = runtime.conversations.new()
        runtime.conversations.ensure()  # stored (as with its first message)
    finally:
        runtime.store.close()
    runtime = _open(tmp_path, repo_a)
    try:
        assert runtime.conversations.continue_latest() == conv_a  # B's is newer but not A's
    finally:
        runtime.store.close()
    runtime = _open(tmp_path, repo_b)
    try:
        assert runtime.conversations.continue_latest() == conv_b
    finally:
        runtime.store.close()
