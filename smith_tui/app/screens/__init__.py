"""Modal screens of the app: config, inspect/edit, history, transcript pager, help, confirm.

One screen per module; each takes the runtime (or what it needs) in its constructor.
The command-palette provider lives in :mod:`smith_tui.app.screens.palette`.
"""
