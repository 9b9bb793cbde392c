"""Image blocks of an ACP prompt: checked (engine/prompt_images.py), and refused unless the model
the turn will use takes images by the server's catalog (``GET /models``: its input
modalities)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp import RequestError

if TYPE_CHECKING:
    from smith_tui.engine.runtime import Runtime


async def prompt_images(session: Any, blocks: list[Any]) -> tuple[dict[str, str], ...]:
    """The prompt's images, checked, for ``Runtime.run_turn(images=...)``; a
    ``RequestError`` (invalid params) that says why when they cannot go."""
    from smith_tui.engine.prompt_images import ImageError, checked_images

    given = [
        {"mime_type": getattr(b, "mime_type", None), "data": getattr(b, "data", None)}
        for b in blocks
        if getattr(b, "type", None) == "image"
    ]
    if not given:
        return ()
    try:
        images = checked_images(given)
    except ImageError as exc:
        raise RequestError.invalid_params({"prompt": str(exc)}) from None
    model, takes = await model_takes_images(session.runtime)
    if not takes:
        raise RequestError.invalid_params(
            {
                "prompt": f"the model {model} does not take images (the server's GET /models "
                "lists no image input for it); pick a model that does in the Model option, "
                "or send the prompt without the image"
            }
        )
    return tuple(images)


async def model_takes_images(runtime: Runtime) -> tuple[str, bool]:
    """The model the next turn's request uses and whether its catalog entry lists image
    input (a model the catalog says nothing about does not: fail closed)."""
    from smith_tui.engine.roles import resolve_role

    model = runtime.model
    if model is None:
        selection = await runtime.services.model.select(
            runtime.options.model,
            runtime.conversations.pinned_model,
            resolve_role(runtime.active_role),
            runtime.config.effective,
        )
        model = selection.model
    from smith_tui.engine.prompt_images import declared_image_models, takes_images

    declared = declared_image_models(runtime.config.effective)
    return model, takes_images(await runtime.catalog(), model, declared)
