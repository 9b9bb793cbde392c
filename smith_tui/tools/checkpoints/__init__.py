"""The checkpoint service: snapshots of the project in a shadow repository, restores, hunk review.

Not a tool: the engine, the worker worktrees and the tools that write files use it.
"""
