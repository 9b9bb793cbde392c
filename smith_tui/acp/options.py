"""A session's config options: the model (the server's models), the role turns run as, and
the permission mode, each with its ACP category so an editor puts it in the right selector.

Importing this module is cheap (the handshake may import it); what it reads from the
engine is imported when a session asks.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime

ROLE_OPTION = "role"
"""The option that picks the role turns run as (direct or orchestrator)."""
MODEL_OPTION = "model"
"""The option that picks the model of the next requests (pinned to the conversation)."""
MODE_OPTION = "mode"
"""The option that picks the permission mode (also offered as the session's modes)."""
AUTO_MODEL = "auto"
"""The model option's value for "no pin": Smith's model selection picks (config, role)."""
ROLE_CATEGORY = "_smith_role"
"""The role's category: ACP has none for it; names starting with ``_`` are free to use."""
ROLES = ("direct", "orchestrator")
warnings.filterwarnings(
    "ignore", message=rf"(?s)Pydantic serializer warnings:.*'{ROLE_CATEGORY}'", category=UserWarning
)


def model_ids(catalog: Sequence[Any]) -> list[str]:
    """The ids of a ``GET /models`` catalog, in its order, each once."""
    return list(dict.fromkeys(str(getattr(m, "id", m)) for m in catalog))


def current_model(runtime: Runtime) -> str:
    """The model option's value: ``--model``, else the conversation's pin, else ``auto``."""
    return runtime.options.model or runtime.conversations.pinned_model or AUTO_MODEL


def model_option(runtime: Runtime, models: Sequence[str]) -> SessionConfigOptionSelect:
    """The server's models as a select option (``category: model``); a pinned model the
    server no longer lists is kept as a choice, so the current value is always offered."""
    current = current_model(runtime)
    values = [AUTO_MODEL, *models]
    if current not in values:
        values.append(current)
    choices = [
        SessionConfigSelectOption(
            value=value,
            name="Auto" if value == AUTO_MODEL else value,
            description="Smith picks (config, role, the server's catalog)"
            if value == AUTO_MODEL
            else None,
        )
        for value in values
    ]
    return SessionConfigOptionSelect(
        type="select",
        id=MODEL_OPTION,
        name="Model",
        description="The model of the next requests, pinned to this conversation.",
        category="model",
        current_value=current,
        options=choices,
    )


def role_option(runtime: Runtime) -> SessionConfigOptionSelect:
    """The role turns run as, as a select option."""
    from smith_tui.engine.roles import resolve_role

    option = SessionConfigOptionSelect(
        type="select",
        id=ROLE_OPTION,
        name="Role",
        description="direct works itself; orchestrator plans and dispatches sub-agents.",
        current_value=runtime.active_role,
        options=[
            SessionConfigSelectOption(value=role, name=resolve_role(role).alias or role)
            for role in ROLES
        ],
    )
    # The SDK's model (0.12) types the category as the spec's names only, though the spec
    # leaves names starting with "_" free: set after validation (a copy's update is not
    # validated), it is sent as it is.
    return option.model_copy(update={"category": ROLE_CATEGORY})


def mode_option(runtime: Runtime) -> SessionConfigOptionSelect:
    """The permission mode as a select option (``category: mode``): clients that take
    config options instead of the session's modes still offer it."""
    from smith_tui.config.permission_settings import MODE_TEXT, PERMISSION_MODES

    return SessionConfigOptionSelect(
        type="select",
        id=MODE_OPTION,
        name="Permissions",
        description="Which tool calls run without asking.",
        category="mode",
        current_value=runtime.permission_mode,
        options=[
            SessionConfigSelectOption(
                value=mode,
                name=MODE_TEXT.get(mode, (mode, ""))[0],
                description=MODE_TEXT.get(mode, (mode, ""))[1] or None,
            )
            for mode in PERMISSION_MODES
        ],
    )


def config_options(runtime: Runtime, models: Sequence[str]) -> list[Any]:
    """Every option of a session, in the order an editor shows them."""
    return [role_option(runtime), model_option(runtime, models), mode_option(runtime)]


async def load_models(runtime: Runtime) -> list[str]:
    """The server's model ids (empty when ``GET /models`` fails: the option then offers
    ``auto`` and the current pin)."""
    return model_ids(await runtime.catalog())


def set_model(runtime: Runtime, value: str, models: Sequence[str]) -> None:
    """Pin ``value`` to the conversation (``auto`` unpins), as ``/model`` does; a model the
    server does not list is refused (a typo would fail every later request)."""
    from smith_tui.engine.errors import UserRequestError

    if value != AUTO_MODEL and value not in models and value != runtime.conversations.pinned_model:
        listed = ", ".join(models[:20]) or "none (GET /models failed or is empty)"
        raise UserRequestError(f"the server offers no model {value!r}; its models: {listed}")
    conversation = runtime.conversations.ensure()
    runtime.store.conversations.set_pinned_model(
        conversation, None if value == AUTO_MODEL else value
    )


def apply(runtime: Runtime, config_id: str, value: str, models: Sequence[str]) -> None:
    """Set option ``config_id`` to ``value``; ``KeyError`` for an option that is not one of
    the session's, the engine's error (with its message) for a value it refuses."""
    if config_id == ROLE_OPTION:
        runtime.set_active_role(value)
    elif config_id == MODEL_OPTION:
        set_model(runtime, value, models)
    elif config_id == MODE_OPTION:
        runtime.set_permission_mode(value)
    else:
        raise KeyError(config_id)


class OptionsReporter:
    """Sends ``config_option_update`` when the model or the permission mode changes outside
    ``session/set_config_option`` (``/model``, ``/mode``, ``session/set_mode``), so the
    editor's selectors follow; ``/role`` is said by the session itself."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.mode: str | None = None

    def __call__(self, event: Any) -> None:
        from acp.schema import ConfigOptionUpdate

        from smith_tui.engine import events as ev

        if isinstance(event, ev.PermissionMode):
            changed = self.mode is not None and event.mode != self.mode
            self.mode = event.mode
        else:
            changed = isinstance(event, ev.CommandOutput) and event.command == "/model" and event.ok
        if changed:
            self.session.send(
                ConfigOptionUpdate(
                    session_update="config_option_update",
                    config_options=self.session.config_options(),
                )
            )
