"""The session's worker worktrees (:mod:`smith_tui.tools.worktrees`): where they live, and the
clean-up of a crashed session's ones when a session opens and of this one's when it closes."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from smith_tui.config import SmithConfig
from smith_tui.config.locations import data_dir
from smith_tui.store import Store
from smith_tui.tools.worktrees import WorkerTrees

log = logging.getLogger(__name__)


def worker_data_dir(store: Store, env: Mapping[str, str]) -> Path:
    """The data folder: the database's folder (as checkpoints use), else Smith's default."""
    path = Path(str(store.path))
    return path.parent if path.is_absolute() else data_dir(env)


def open_worker_trees(store: Store, env: Mapping[str, str], config: SmithConfig) -> WorkerTrees:
    """The worker worktrees of a session; those a crashed session left are removed first."""
    trees = WorkerTrees(worker_data_dir(store, env), max_bytes=config.checkpoints.max_bytes)
    try:
        for tree in trees.clean_stale():
            log.info("removed the worktree %s a crashed session left (%s)", tree.path, tree.branch)
    except Exception:  # a failed clean-up must not stop the session from opening
        log.exception("cleaning up stale worker worktrees failed")
    return trees


def close_worker_trees(trees: WorkerTrees) -> None:
    """Remove this session's finished worktree folders (their branches stay mergeable)."""
    try:
        trees.close()
    except Exception:
        log.exception("removing this session's worker worktrees failed")
