"""The dataclass code cache (smith_tui/dataclass_code.py): the same classes, compiled once.

The cache is run in fresh interpreters (``sys.executable``), as ``smith`` runs it: one
start compiles and saves, the next reads the file and compiles nothing. A file that is not
this user's own, that others may write, or that is not a cache is ignored.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from smith_tui.dataclass_code import CodeCache, cache_path

ROOT = Path(__file__).resolve().parents[1]

# A program that installs the cache, defines dataclasses and prints what they do.
PROGRAM = """
import dataclasses, json, sys
from pathlib import Path
from smith_tui import dataclass_code

cache = dataclass_code.install(Path(sys.argv[1]))
compiled = []
real_compile = compile
import builtins
def counting_compile(*args, **kwargs):
    compiled.append(args[0])
    return real_compile(*args, **kwargs)
builtins.compile = counting_compile

@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: "list[str]" = dataclasses.field(default_factory=list)

@dataclasses.dataclass(order=True)
class Pair:
    a: int
    b: int = 2

p = Point(1)
try:
    p.x = 2
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
builtins.compile = real_compile
print(json.dumps({
    "repr": repr(p),
    "eq": Point(1) == Point(1, []),
    "hash": hash(Point(1, ())) == hash(Point(1, ())),
    "frozen": frozen,
    "order": Pair(1) < Pair(2),
    "init_annotations": {k: str(v) for k, v in Point.__init__.__annotations__.items()},
    "compiled": len(compiled),
    "cached": len(cache.codes),
}))
cache.save()
"""


def _run(folder: Path) -> dict[str, object]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _behaviour(result: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in result.items() if k not in ("compiled", "cached")}


def test_the_second_start_compiles_nothing_and_the_classes_are_the_same(tmp_path: Path) -> None:
    first = _run(tmp_path)
    # Point: __init__, __repr__, __eq__, __setattr__, __delattr__, __hash__; Pair: __init__,
    # __repr__, __eq__ and the four comparisons.
    assert first["compiled"] == 13
    second = _run(tmp_path)
    assert second["compiled"] == 0
    assert _behaviour(second) == _behaviour(first)
    assert first["frozen"] is True and first["eq"] is True and first["order"] is True
    # Compiled as the dataclasses module would, not with this module's
    # ``from __future__ import annotations``: the annotations are the classes, not text.
    assert first["init_annotations"] == {"x": "<class 'int'>", "y": "list[str]", "return": "None"}
    assert cache_path(tmp_path).stat().st_mode & 0o777 == 0o600


def test_the_cached_code_is_what_compile_makes(tmp_path: Path) -> None:
    cache = CodeCache(cache_path(tmp_path))
    text = "def __create_fn__():\n def f(self):\n  return 1\n return f"
    namespace: dict[str, object] = {}
    cache.exec(text, {}, namespace)
    cache.save()
    again = CodeCache(cache_path(tmp_path))
    assert again.codes[text] == compile(text, "<string>", "exec", dont_inherit=True)
    assert again.added == 0


@pytest.mark.parametrize("spoil", ["others_may_write", "not_a_cache", "a_symlink"])
def test_a_cache_file_that_cannot_be_trusted_is_ignored(tmp_path: Path, spoil: str) -> None:
    text = "def __create_fn__():\n def f(self):\n  return 1\n return f"
    cache = CodeCache(cache_path(tmp_path))
    cache.exec(text, {}, {})
    cache.save()
    path = cache_path(tmp_path)
    if spoil == "others_may_write":
        path.chmod(0o622)
    elif spoil == "not_a_cache":
        path.write_bytes(b"\x00not marshal")
    else:
        real = tmp_path / "elsewhere"
        path.rename(real)
        path.symlink_to(real)
    assert CodeCache(path).codes == {}


def test_a_cache_of_another_user_is_ignored(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    text = "def __create_fn__():\n def f(self):\n  return 1\n return f"
    cache = CodeCache(cache_path(tmp_path))
    cache.exec(text, {}, {})
    cache.save()
    os.chown(cache_path(tmp_path), 65534, 65534)
    assert CodeCache(cache_path(tmp_path)).codes == {}


def test_after_release_new_code_is_added_to_what_the_file_holds(tmp_path: Path) -> None:
    first_text = "def __create_fn__():\n def f(self):\n  return 1\n return f"
    later_text = "def __create_fn__():\n def g(self):\n  return 2\n return g"
    cache = CodeCache(cache_path(tmp_path))
    cache.exec(first_text, {}, {})
    cache.save()
    reopened = CodeCache(cache_path(tmp_path))
    assert reopened.added == 0
    reopened.release()
    assert reopened.codes == {}
    namespace: dict[str, object] = {}
    reopened.exec(later_text, {}, namespace)
    made = namespace["__create_fn__"]
    assert callable(made) and made()(None) == 2
    assert reopened.added == 1
    reopened.save()
    assert set(CodeCache(cache_path(tmp_path)).codes) == {first_text, later_text}


# A planted cache entry for Point's __init__ text whose code writes a file: what a writable
# cache would let another user run in smith's process.
PLANT = """
import dataclasses, marshal, sys
from pathlib import Path
from smith_tui import dataclass_code

folder, marker, mode = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3], 8)
seen = []
real_exec = dataclass_code.builtins.exec
def record(source, globals=None, locals=None):
    seen.append(source)
    real_exec(source, globals, locals)
dataclasses.exec = record
@dataclasses.dataclass
class Point:
    x: int
planted = {  # the file's format: each text's code as marshal.dumps writes it
    text: marshal.dumps(compile(f"open({marker!r}, 'w').close()\\n" + text, "<string>", "exec"))
    for text in seen
}
path = dataclass_code.cache_path(folder)
path.parent.mkdir(parents=True, exist_ok=True)
path.write_bytes(marshal.dumps(planted))
path.chmod(mode)
"""

USE = """
import dataclasses, sys
from pathlib import Path
from smith_tui import dataclass_code
dataclass_code.install(Path(sys.argv[1]))
@dataclasses.dataclass
class Point:
    x: int
assert Point(1).x == 1
"""


def _python(code: str, *args: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_code_planted_in_a_cache_others_may_write_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _python(PLANT, str(tmp_path / "cache"), str(marker), "666")
    _python(USE, str(tmp_path / "cache"))
    assert not marker.exists()


def test_control_the_planted_code_runs_from_a_file_only_its_owner_may_write(tmp_path: Path) -> None:
    # The same file, private: the cache trusts it (as Python trusts its bytecode cache), so
    # the payload above is real and only the file's permissions kept it out.
    marker = tmp_path / "ran"
    _python(PLANT, str(tmp_path / "cache"), str(marker), "600")
    _python(USE, str(tmp_path / "cache"))
    assert marker.exists()


def test_only_the_codes_asked_for_are_unmarshalled(tmp_path: Path) -> None:
    # The file keeps each code marshalled; reading it decodes none of them, so an entry a
    # start never asks for costs no code object, and a damaged one is compiled instead.
    cache = CodeCache(cache_path(tmp_path))
    good = "def __create_fn__():\n def f(self):\n  return 1\n return f"
    damaged = "def __create_fn__():\n def g(self):\n  return 2\n return g"
    cache.exec(good, {}, {})
    cache.exec(damaged, {}, {})
    cache.save()
    path = cache_path(tmp_path)
    blobs = marshal.loads(path.read_bytes())
    assert set(blobs) == {good, damaged} and all(isinstance(b, bytes) for b in blobs.values())
    blobs[damaged] = b"\x00not code"
    path.write_bytes(marshal.dumps(blobs))
    again = CodeCache(path)
    assert len(again.codes) == 2  # read, not decoded: the damaged entry is still there
    namespace: dict[str, object] = {}
    again.exec(good, {}, namespace)
    again.exec(damaged, {}, namespace)
    assert again.added == 1  # the damaged text was compiled; the good one came from the file
    assert namespace["__create_fn__"]()(None) == 2
