"""Issue 20, "Permission rules read commands as bash does": each attack against the rules,
and its control — the naive raw-text matcher the rules used before (copied below) lets it
through, and real bash, run on the same string in a tmp folder, does what the attack says.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from smith_tui.engine import events as ev
from smith_tui.engine.permission_gate import PermissionReply, PermissionRequest, role_subject
from smith_tui.tools.permission_policy import Rule, Subject, decide
from smith_tui.tools.shell_words import read_command
from tests.dispatch.support import dispatch
from tests.support.llm_server import ScriptedLLMServer, text_reply, tool_call
from tests.support.runtime import open_runtime

SECTION = "rules"

# -- the naive matcher the rules used before, kept as the control ----------------------------

_OLD_COMPOUND = re.compile(r"[;&|<>`\n\r]|\$\(")
_OLD_SPLIT = re.compile(r"\|\||&&|[;&|\n\r]")


def naive_allows(pattern: str, command: str) -> bool:
    """The old allow check: the exact text, or a glob over text without ``;&|<>`$(``."""
    if command == pattern:
        return True
    return not _OLD_COMPOUND.search(command) and fnmatch.fnmatchcase(command, pattern)


def naive_denies(pattern: str, command: str) -> bool:
    """The old deny check: the whole text or a part between ``;``/``&``/``|``/newlines."""
    parts = [command, *(part.strip() for part in _OLD_SPLIT.split(command))]
    return any(fnmatch.fnmatchcase(part, pattern) for part in parts if part)


def naive_grant(command: str) -> str:
    """The old session grant: the first word (and a subcommand), then ``*``."""
    if _OLD_COMPOUND.search(command):
        return f"bash({command})"
    words = shlex.split(command)
    kept = words[:1]
    if (
        len(words) > 1
        and words[0] in {"git", "make"}
        and re.fullmatch(r"[A-Za-z][\w.:-]*", words[1])
    ):
        kept.append(words[1])
    return f"bash({' '.join(kept)}*)"


def run_bash(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run by real bash in ``cwd``, as the bash tool runs it (``bash -c``)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "LC_ALL": "C"}
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def _decide(command: str, mode: str = "ask", **rules: list[str]) -> Any:
    return decide(
        mode,
        Subject("bash", command),
        allow=[Rule.parse(r) for r in rules.get("allow", [])],
        deny=[Rule.parse(r) for r in rules.get("deny", [])],
        grants=[Rule.parse(r) for r in rules.get("grants", [])],
    )


# -- allow: only literal simple commands -----------------------------------------------------

SMUGGLED = {
    "a $'…' default then ${x@P}": "git status ${x:=$'\\x24\\x28touch pwn\\x29'}${x@P}",
    "an array subscript evaluated by $[…]": "git status ${z:=a[\\$\\(touch\\ pwn\\)]} $[z]",
    "an array subscript evaluated by ${!x}": "git status ${z:=a[\\$\\(touch\\ pwn\\)]} ${!z}",
    "a subscript in a substring offset": (
        "git status ${y:=abc} ${z:=a[\\$\\(touch\\ pwn\\)]} ${y:z}"
    ),
}
ALLOW = "bash(git status*)"


@pytest.mark.parametrize("what", list(SMUGGLED))
@pytest.mark.attack(
    SECTION, "bash(git status*) lifts a question for a command smuggled in expansions"
)
def test_attack_an_allow_rule_does_not_lift_a_smuggled_command(what: str) -> None:
    verdict = _decide(SMUGGLED[what], allow=[ALLOW])
    assert verdict.action == "ask"
    assert "does not apply" in verdict.reason and ALLOW in verdict.reason
    headless = _decide(SMUGGLED[what], allow=[ALLOW], deny=["bash(rm *)"])
    assert headless.action == "ask" and headless.unsure  # a deny rule cannot be sure either


@pytest.mark.parametrize("what", list(SMUGGLED))
@pytest.mark.control(SECTION, "the naive matcher allows it and bash runs the smuggled touch pwn")
def test_control_the_naive_matcher_allows_it_and_bash_runs_the_smuggled_command(
    what: str, tmp_path: Path
) -> None:
    assert naive_allows("git status*", SMUGGLED[what])
    run_bash(SMUGGLED[what], tmp_path)
    assert (tmp_path / "pwn").exists(), f"bash did not run the command smuggled via {what}"


NOT_LITERAL = {
    "$x": "a parameter expansion",
    "${x}": "a parameter expansion",
    "${a[1]}": "a parameter expansion",
    "$[1+1]": "an arithmetic expansion",
    "$((1+1))": "an arithmetic expansion",
    "$(id)": "a command substitution",
    "`id`": "a command substitution",
    '"$(id)"': "a command substitution",
    "<(id)": "a process substitution",
    "$'\\x24x'": "decodes to",
    "$'\\x28'": "decodes to",
    '$"x"': "a locale-translated string",
    "*.py": "a glob pattern",
    "/etc/pass?d": "a glob pattern",
    "[ab]": "a glob pattern",
    "{a,b}": "a brace expansion",
    "~/x": "a tilde expansion",
    "a=~/x": "a tilde expansion",
}


@pytest.mark.parametrize("word", list(NOT_LITERAL))
def test_a_word_bash_would_expand_keeps_an_allow_rule_out_and_is_named(word: str) -> None:
    verdict = _decide(f"git status {word}", allow=[ALLOW])
    assert verdict.action == "ask"
    assert NOT_LITERAL[word] in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    "command",
    [
        "git status > out",
        "git status 2>&1",
        "git status <<< x",
        "git status &",
        "git status |& cat",
        "(git status)",
        "{ git status; }",
        "git status; eval ls",
        "git status; source x",
        "git status; . x",
        "git status; bash -c ls",
        "git status; sh -c ls",
        "PATH=.; git status",
        "f(){ git status; }; f",
        "! git status",
        "if true; then git status; fi",
        "git status 'unclosed",
    ],
)
def test_anything_but_literal_simple_commands_asks(command: str) -> None:
    allow = [ALLOW, "bash(eval*)", "bash(source*)", "bash(.*)", "bash(bash*)", "bash(sh*)"]
    allow += ["bash(cat*)", "bash(f*)", "bash(PATH*)", "bash(true*)"]
    assert _decide(command, allow=allow).action == "ask", command


def test_plain_lines_are_allowed_when_every_command_is() -> None:
    quoted = "git status 'a b' \"c d\" e\\ f $'g\\x20h' HEAD~1 --format=%h"
    assert read_command(quoted).top[0].literal() == "git status a b c d e f g h HEAD~1 --format=%h"
    assert _decide(quoted, allow=[ALLOW]).action == "allow"
    both = _decide(
        "git status && git diff\ngit status | cat", allow=[ALLOW, "bash(git diff*)", "bash(cat)"]
    )
    assert both.action == "allow"
    half = _decide("git status && curl x", allow=[ALLOW])
    assert half.action == "ask" and "no allow rule covers `curl x`" in half.reason
    # `a` for a command that is not plain records that exact text, which allows only it
    assert _decide("echo $HOME", grants=["bash(echo $HOME)"]).action == "allow"
    assert _decide("echo $HOME; id", grants=["bash(echo $HOME)"]).action == "ask"


# -- deny: every command that would run ------------------------------------------------------

DENY = "bash(rm *)"
EVASIONS = {
    "inside $(…)": ("echo $(rm victim)", None),
    "inside backquotes": ("echo `rm victim`", None),
    "in a subshell": ("(rm victim)", None),
    "in a group": ("{ rm victim; }", None),
    "after an assignment": ("X=1 rm victim", None),
    "behind env": ("env A=1 rm victim", "env"),
    "behind command": ("command rm victim", None),
    "behind exec": ("exec rm victim", None),
    "behind nice": ("nice -n 5 rm victim", "nice"),
    "behind nohup": ("nohup rm victim", "nohup"),
    "behind timeout": ("timeout -s KILL 5 rm victim", "timeout"),
    "behind xargs": ("echo victim | xargs rm", "xargs"),
    "behind sudo": ("sudo -u root rm victim", "sudo"),
    "in bash -c": ("bash -c 'rm victim'", None),
    "in sh -c": ('sh -c "rm victim"', "sh"),
    "in eval": ("eval 'rm victim'", None),
    "in a function body": ("f(){ rm victim; }; f", None),
    "quoted name": ("'rm' victim", None),
    "escaped name": ("\\rm victim", None),
    "by its path": ("/bin/rm victim", None),
    "nested wrappers": (
        "env -i PATH=/usr/bin:/bin nice -5 timeout 9 bash -c 'nohup rm victim'",
        "nice",
    ),
    "behind time": ("time -p rm victim", None),
    "negated": ("! rm victim", None),
    "in find -exec": ("find . -name victim -exec rm victim ';'", "find"),
    "in a pipeline": ("true | rm victim", None),
    "after &&": ("true && rm victim", None),
    "after ||": ("false || rm victim", None),
}
"""Forms of ``rm victim``: the command, and a program it needs that may be missing."""


@pytest.mark.parametrize("what", list(EVASIONS))
@pytest.mark.attack(SECTION, "bash(rm *) is evaded by nesting, wrapping, assigning or quoting rm")
def test_attack_a_deny_rule_catches_rm(what: str) -> None:
    command, _ = EVASIONS[what]
    for mode in ("ask", "yolo"):
        verdict = _decide(command, mode, allow=["bash"], deny=[DENY])
        # xargs adds the words it reads, unseen: the rule may apply, so it asks (headless: denied)
        expected = "ask" if "xargs" in command else "deny"
        assert verdict.action == expected and DENY in verdict.reason, (mode, verdict)


@pytest.mark.parametrize("what", list(EVASIONS))
@pytest.mark.control(SECTION, "the naive matcher misses these forms and bash runs rm in each")
def test_control_bash_runs_rm_in_each_form(what: str, tmp_path: Path) -> None:
    command, needs = EVASIONS[what]
    if what in ("in a pipeline", "after &&", "after ||"):
        assert naive_denies("rm *", command)  # the old splitter caught these three
    else:
        assert not naive_denies("rm *", command), "the naive matcher already catches it"
    if needs and not shutil.which(needs):
        pytest.skip(f"{needs} is not installed: the naive matcher's miss is the control")
    if needs == "sudo" and os.geteuid() != 0:
        pytest.skip("sudo needs root here: the naive matcher's miss is the control")
    victim = tmp_path / "victim"
    victim.write_text("x")
    run_bash(command, tmp_path)
    assert not victim.exists(), f"bash did not run rm {what}"


@pytest.mark.attack(SECTION, "bash(rm *) is evaded by a command name that is not literal")
def test_attack_a_command_name_that_is_not_literal_asks_with_a_deny_rule() -> None:
    for command in ("c=rm; $c victim", "${c:-rm} victim", "r[m] victim", "{r,}m victim"):
        verdict = _decide(command, "yolo", deny=[DENY])
        assert verdict.action == "ask" and verdict.unsure, command
        assert "permissions.deny may apply" in verdict.reason
    # without a deny rule for bash it is only what the mode says
    assert _decide("c=rm; $c victim", "yolo").action == "allow"


@pytest.mark.control(
    SECTION, "bash runs rm from a name that is not literal; the naive matcher misses it"
)
def test_control_a_command_name_that_is_not_literal_runs_rm(tmp_path: Path) -> None:
    for command in ("c=rm; $c victim", "${c:-rm} victim"):
        assert not naive_denies("rm *", command)
        (tmp_path / "victim").write_text("x")
        run_bash(command, tmp_path)
        assert not (tmp_path / "victim").exists(), command


def test_more_forms_that_run_rm_are_denied_or_ask() -> None:
    for command in (
        "rm victim &",
        "coproc rm victim",
        "if true; then rm victim; fi",
        "for f in a; do rm victim; done",
        "case x in x) rm victim;; esac",
        "cat <<EOF\n$(rm victim)\nEOF",
        "cat <(rm victim)",
        "x=$(rm victim)",
        "a[$(rm victim)]=1",
        "trap 'rm victim' EXIT",
        "env -S 'rm victim'",
        "sudo -s rm victim",
        "command -p rm victim",
        "nice -n5 rm victim",
    ):
        assert _decide(command, "yolo", deny=[DENY]).action == "deny", command
    for command in ("bash <<EOF\nrm victim\nEOF", "echo rm victim | sh", "bash -s"):
        verdict = _decide(command, "yolo", deny=[DENY])  # the heredoc's line is denied as text
        assert verdict.action == "deny" or "reads its commands from its input" in verdict.reason
        assert verdict.action != "allow", command


def test_strings_nested_too_deep_are_not_sure() -> None:
    command = "rm victim"
    for _ in range(8):
        command = f"bash -c {shlex.quote(command)}"
    verdict = _decide(command, "yolo", deny=["bash(git push*)"])
    assert verdict.action == "ask" and "too deep" in verdict.reason
    assert _decide(command, "yolo", deny=[DENY]).action == "ask"
    deep = "(" * 5000 + "rm victim" + ")" * 5000
    assert _decide(deep, "yolo", deny=["bash(git push*)"]).action == "ask"
    assert _decide(deep, allow=["bash(rm*)"]).action == "ask"


def test_deny_rules_ask_when_not_sure_and_only_an_exact_grant_lifts_it() -> None:
    for command in (
        "rm_dir=$x; ls $[x]",
        "echo 'unclosed",
        "xargs --weird rm",
        "bash",
        "echo rm | bash",
        "eval $x",
        "[[ $x -eq 1 ]]",
        "let x",
        "declare 'a[$(id)]=1'",
        'printf -v "$v" x',
    ):
        verdict = _decide(command, "yolo", deny=[DENY])
        assert verdict.action == "ask", command
    assert _decide("eval $x", "yolo", deny=[DENY], grants=["bash(eval $x)"]).action == "allow"
    assert _decide("eval $x", "yolo", deny=[DENY], allow=["bash(eval*)"]).action == "ask"
    # literal words elsewhere do not ask: only words where the pattern could still match
    assert _decide("ls $HOME", "yolo", deny=[DENY]).action == "allow"
    assert _decide("git push $remote", "yolo", deny=["bash(git push * --force*)"]).action == "ask"
    assert _decide("git status $x", "yolo", deny=["bash(git push*)"]).action == "allow"
    assert _decide("for f in a; do rm $f; done", "yolo", deny=[DENY]).action == "ask"


# -- session grants never widen --------------------------------------------------------------

WIDE_GRANTS = {
    "FOO=1 make test": "FOO=1 rm -rf victim",
    "env A=1 ls": "env A=1 rm -rf victim",
    "sudo ls": "sudo rm -rf victim",
    "git -C sub status": "git -C sub -c core.pager=sh log",
    "python -c 'print(1)'": 'python -c \'__import__("os").remove("victim")\'',
    "node -e 1": 'node -e \'require("fs").rmSync("victim")\'',
    "bash -c ls": "bash -c 'rm victim'",
}


@pytest.mark.parametrize("granted", list(WIDE_GRANTS))
@pytest.mark.attack(SECTION, "a session grant records a prefix that allows more than was shown")
def test_attack_a_session_grant_does_not_widen(granted: str) -> None:
    grant = Subject("bash", granted).grant()
    assert grant == f"bash({granted})"
    assert _decide(WIDE_GRANTS[granted], grants=[grant]).action == "ask"
    assert _decide(granted, grants=[grant]).action == "allow"


@pytest.mark.parametrize("granted", list(WIDE_GRANTS))
@pytest.mark.control(SECTION, "the old grant was a prefix that allows a different command")
def test_control_the_old_grant_was_a_prefix_that_allows_more(granted: str) -> None:
    old = naive_grant(granted)
    pattern = old[len("bash(") : -1]
    assert naive_allows(pattern, WIDE_GRANTS[granted]), old


# -- role names and aliases ------------------------------------------------------------------


@pytest.mark.attack(
    SECTION, "dispatch to Niobe (the worker by its alias) passes dispatch(worker) and read-only"
)
def test_attack_dispatch_by_alias_is_the_worker_for_every_check() -> None:
    for name in ("Niobe", "niobe", " worker ", "WORKER"):
        subject = role_subject(Subject("dispatch", name))
        assert subject.value == "worker"
        deny = decide("yolo", subject, deny=[Rule.parse("dispatch(worker)")])
        assert deny.action == "deny", name
        assert decide("read-only", subject).action == "deny", name
    link = role_subject(Subject("dispatch", "Link"))
    assert decide("read-only", link).action == "allow"
    assert decide("ask", link, allow=[Rule.parse("dispatch(Link)")]).action == "allow"
    assert decide("ask", link, allow=[Rule.parse("dispatch(explorer)")]).action == "allow"
    assert decide("read-only", Subject("dispatch", "nobody")).action == "deny"


@pytest.mark.control(
    SECTION, "the alias as given passed dispatch(worker) and the old read-only check"
)
def test_control_the_alias_as_given_passed_both_checks() -> None:
    raw = Subject("dispatch", "Niobe")
    assert decide("yolo", raw, deny=[Rule.parse("dispatch(worker)")]).action == "allow"
    assert not old_read_only_refuses(raw)


def old_read_only_refuses(subject: Subject) -> bool:
    """The old read-only check: only the name ``worker`` was a worker."""
    return subject.tool == "dispatch" and subject.value == "worker"


# -- through the real gate -------------------------------------------------------------------


class Asker:
    """An ask port that records each question and denies it."""

    def __init__(self) -> None:
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> PermissionReply:
        self.requests.append(request)
        return PermissionReply("deny")


def _results(runtime: Any) -> list[str]:
    return [m["content"] for m in runtime.messages if m["role"] == "tool"]


def _runtime(tmp_path: Path, server: ScriptedLLMServer, mode: str, **rules: Any) -> Any:
    runtime, rec = open_runtime(
        tmp_path,
        server.base_url,
        config={"permissions": {"mode": mode, **rules}, "sandbox": {"mode": "off"}},
    )
    return runtime, rec


async def test_the_gate_names_what_kept_the_allow_rule_out_and_headless_denies(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    attack = SMUGGLED["a $'…' default then ${x@P}"]
    repo = tmp_path / "repo"
    llm_server.enqueue(
        text_reply(tool_calls=[tool_call("bash", {"command": attack})]), text_reply("ok")
    )
    runtime, _ = _runtime(tmp_path, llm_server, "ask", allow=[ALLOW])
    asker = Asker()
    runtime.ask_permission = asker
    await runtime.run_turn("status")
    [request] = asker.requests
    assert f"{ALLOW} does not apply" in request.reason and "`${x:=" in request.reason
    assert request.grant == f"bash({attack})"
    assert not (repo / "pwn").exists()
    await runtime.aclose()

    llm_server.enqueue(
        text_reply(
            tool_calls=[
                tool_call("bash", {"command": attack}),
                tool_call("bash", {"command": "c=rm; $c README.md"}),
            ]
        ),
        text_reply("ok"),
    )
    headless, rec = _runtime(tmp_path, llm_server, "yolo", deny=[DENY])
    headless.ask_permission = None
    await headless.run_turn("status")
    smuggled, renamed = _results(headless)
    assert "permission denied" in smuggled and "nobody can be asked" in smuggled
    assert "`${x@P}`" in smuggled
    assert "`$c`" in renamed and "literal" in renamed
    assert not (repo / "pwn").exists() and (repo / "README.md").exists()
    assert len(rec.of(ev.PermissionDenied)) == 2
    await headless.aclose()


async def test_the_gate_refuses_a_worker_dispatched_by_its_alias(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("Niobe", "change things")]), text_reply("ok")
    )
    runtime, _ = _runtime(tmp_path, llm_server, "read-only")
    runtime.set_active_role("orchestrator")
    await runtime.run_turn("delegate")
    [content] = _results(runtime)
    assert "workers may not be dispatched" in content
    await runtime.aclose()

    llm_server.enqueue(
        text_reply(tool_calls=[dispatch("niobe", "change things")]), text_reply("ok")
    )
    denied, _ = _runtime(tmp_path, llm_server, "yolo", deny=["dispatch(worker)"])
    denied.set_active_role("orchestrator")
    await denied.run_turn("delegate")
    assert "dispatch(worker) in permissions.deny" in _results(denied)[0]
    await denied.aclose()


def test_a_check_costs_well_under_a_millisecond() -> None:
    rules = {"allow": [ALLOW, "bash(pytest*)", "bash(tail*)"], "deny": [DENY, "bash(git push*)"]}
    command = "git status --short && pytest -q tests/tools -k 'not slow' | tail -5"
    _decide(command, **rules)
    # This process's CPU time: on a loaded machine (a parallel run) the wall clock also
    # counts the time other processes held the core.
    started = time.process_time()
    for i in range(200):
        read_command.cache_clear()
        _decide(f"{command} {i}", **rules)
    per_check = (time.process_time() - started) / 200
    assert per_check < 0.001, f"{per_check * 1000:.3f} ms per check"
