"""What the user's setup costs a headless turn (issue 23: "nothing to a turn that uses none
of them"): the front matter of skills and agents parsed once is kept by content in smith's
data folder, so the next ``smith -p`` neither imports PyYAML nor parses a block, and sends
the same system prompt; a changed file is parsed again. The real ``smith`` binary against
the scripted server, with Python's own import log read from its stderr."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from smith_tui.config.front_matter import (
    CACHE_FILE_NAME,
    MAX_CACHED,
    MAX_CACHED_BLOCK_CHARS,
    MetaCache,
    split,
)
from tests.support.llm_server import ScriptedLLMServer, text_reply
from tests.support.runtime import make_git_repo
from tests.support.smith_cli import run_smith, server_args, smith_env

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_setup"


def _turn(tmp_path: Path, repo: Path, server: ScriptedLLMServer, prompt: str = "hi") -> set[str]:
    """Run ``smith -p PROMPT`` in ``repo``; the modules it imported."""
    env = smith_env(tmp_path, HOME=str(tmp_path / "home"), PYTHONPROFILEIMPORTTIME="1")
    config = tmp_path / "config.json"
    config.write_text("{}", encoding="utf-8")
    args = ["-p", prompt, *server_args(server.base_url, tmp_path / "smith.db", config)]
    done = run_smith(args, cwd=repo, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def test_a_second_session_reuses_the_parsed_front_matter(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    shutil.copytree(FIXTURE / ".claude", repo / ".claude")
    with ScriptedLLMServer(default_reply=text_reply("ok")) as server:
        first = _turn(tmp_path, repo, server)
        second = _turn(tmp_path, repo, server)
        skill = repo / ".claude" / "skills" / "changelog" / "SKILL.md"
        skill.write_text(skill.read_text().replace("Write a CHANGELOG", "EDITED a CHANGELOG"))
        third = _turn(tmp_path, repo, server)
        bodies = server.chat_requests()
    assert "yaml" in first  # nothing cached yet: parsed
    assert "yaml" not in second  # the same files: nothing parsed, PyYAML not even imported
    assert "yaml" in third  # one file changed: that block is parsed again
    systems = [body["messages"][0]["content"] for body in bodies]
    assert "- pdf-forms: Fill in PDF forms" in systems[0] and "Sub-agents from files" in systems[0]
    assert systems[1] == systems[0]  # the cache changes nothing but the time
    assert "- changelog: EDITED" in systems[2]
    saved = json.loads((tmp_path / "xdg-data" / "smith" / CACHE_FILE_NAME).read_text())
    assert saved["version"] == 1 and len(saved["entries"]) >= 4


def test_only_what_json_holds_exactly_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    cache = MetaCache(path)
    plain = "---\nname: a\ndescription: yes\ntools: [Read, 2]\n---\nbody\n"
    dated = "---\nname: b\nreleased: 2024-05-01\n---\nbody\n"
    assert split(plain, cache).meta == split(plain).meta
    assert split(dated, cache).meta == split(dated).meta
    cache.save()
    again = MetaCache(path)
    assert again.get("name: a\ndescription: yes\ntools: [Read, 2]\n") == {
        "name": "a",
        "description": True,  # YAML 1.1's "yes", as the parser says
        "tools": ["Read", 2],
    }
    assert again.get("name: b\nreleased: 2024-05-01\n") is None  # a date: parsed every time
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_cache_file_that_cannot_be_used_is_no_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    for junk in ("not json", '{"version": 1, "entries": [1, 2]}', '["list"]', "{}"):
        path.write_text(junk, encoding="utf-8")
        cache = MetaCache(path)
        assert split("---\nname: x\n---\n", cache).meta == {"name": "x"}
        cache.save()
        assert MetaCache(path).get("name: x\n") == {"name": "x"}  # rewritten, usable again


def test_the_cache_stays_small(tmp_path: Path) -> None:
    cache = MetaCache(tmp_path / "cache.json")
    long_block = "description: " + "x" * MAX_CACHED_BLOCK_CHARS + "\n"
    assert split(f"---\n{long_block}---\n", cache).meta["description"].startswith("xxx")
    assert cache.get(long_block) is None  # parsed every time, never kept
    for n in range(MAX_CACHED + 10):
        cache.put(f"name: s{n}\n", {"name": f"s{n}"})
    assert cache.get("name: s0\n") is None  # the oldest went first
    assert cache.get(f"name: s{MAX_CACHED + 9}\n") == {"name": f"s{MAX_CACHED + 9}"}
