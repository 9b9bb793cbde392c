"""Session updates and permission requests as Smith puts them on the wire.

The SDK drops every ``None`` field when it serialises a message. A diff of a file that
did not exist has ``oldText: null``: the schema lets it be left out, but Toad reads the
key and fails on a diff without it. These two sends serialise as the SDK does, then put
``oldText: null`` back into each diff that has no old text.
"""

from __future__ import annotations

from typing import Any

from acp.meta import CLIENT_METHODS
from acp.schema import RequestPermissionRequest, RequestPermissionResponse, SessionNotification
from acp.utils import serialize_params


def with_null_old_text(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with ``oldText: null`` in each diff of its tool call content."""
    for key in ("update", "toolCall"):
        holder = params.get(key)
        content = holder.get("content") if isinstance(holder, dict) else None
        for item in content if isinstance(content, list) else []:
            if isinstance(item, dict) and item.get("type") == "diff":
                item.setdefault("oldText", None)
    return params


def _raw(conn: Any) -> Any:
    """The SDK connection under an ``AgentSideConnection`` (``None``: another kind)."""
    return getattr(conn, "_conn", None)


async def session_update(conn: Any, session_id: str, update: Any) -> None:
    """``session/update`` with ``update``."""
    raw = _raw(conn)
    if raw is None:
        await conn.session_update(session_id=session_id, update=update)
        return
    params = serialize_params(SessionNotification(session_id=session_id, update=update))
    await raw.send_notification(CLIENT_METHODS["session_update"], with_null_old_text(params))


async def request_permission(
    conn: Any, session_id: str, tool_call: Any, options: list[Any]
) -> RequestPermissionResponse:
    """``session/request_permission`` about ``tool_call``; the client's answer."""
    raw = _raw(conn)
    if raw is None:
        response: RequestPermissionResponse = await conn.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )
        return response
    request = RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options)
    answer = await raw.send_request(
        CLIENT_METHODS["session_request_permission"], with_null_old_text(serialize_params(request))
    )
    return RequestPermissionResponse.model_validate(answer)
