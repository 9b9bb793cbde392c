"""The Chat-Completions client: one request in, one normalised response out.

:class:`LLMClient` owns the HTTP transport (httpx), SSE decoding and stream
assembly. It never retries: every failure is raised as an :class:`LLMError`
whose ``retryable`` flag tells the turn layer what to do.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from smith_tui.llm import catalog as _catalog
from smith_tui.llm.config import LLMConfig, coerce_config
from smith_tui.llm.errors import (
    PROTOCOL,
    SCHEMA,
    TRANSPORT,
    LLMError,
    cancelled_error,
    error_from_http,
    error_from_payload,
    truncated_error,
)
from smith_tui.llm.guard import DEADLINE, STALLED, Watchdog
from smith_tui.llm.request import (
    build_chat_request,
    build_endpoint,
    build_headers,
    coerce_request,
    normalize_api_url,
    serialize_request_body,
)
from smith_tui.llm.sse import SSEParser
from smith_tui.llm.stream import StreamAssembler
from smith_tui.llm.types import ChatRequest, ChatResponse, StreamHandlers, Usage, coerce_handlers
from smith_tui.llm.usage import normalize_usage

if TYPE_CHECKING:
    import httpx

# httpx (with httpcore, h11, anyio, the email and cookie modules: about 3 MB and 150
# modules) is imported by the first request, not with the client: the app opens its runtime
# before the first prompt and sends nothing until then (docs/PERFORMANCE.md, RSS before the
# first prompt). Each function that needs it imports it.

log = logging.getLogger("smith_tui.llm")

_ERROR_BODY_LIMIT = 64 * 1024
_isawaitable = inspect.isawaitable


def _detail(exc: BaseException) -> str:
    """The text of ``exc``, or of the error under it: httpx often wraps an OSError (such as
    a connection reset) in an exception whose own message is empty."""
    current: BaseException | None = exc
    while current is not None:
        text = str(current).strip()
        if text:
            return text
        current = current.__cause__ or current.__context__
    return type(exc).__name__


def _where(exc: httpx.RequestError) -> str:
    """`` at <url>`` when the failed request is known."""
    try:
        return f" at {exc.request.url}"
    except RuntimeError:  # httpx raises it when the error was made without its request
        return ""


def error_from_exception(exc: BaseException, *, started: bool = False) -> LLMError:
    """Map a transport exception onto a stable code (``started``: the body was being read)."""
    if isinstance(exc, LLMError):
        return exc
    import httpx

    phase = "stream" if started else "connect"
    if isinstance(exc, httpx.ConnectTimeout):
        return LLMError(
            TRANSPORT,
            "timeout",
            f"timed out connecting to the API{_where(exc)}",
            origin="connect",
            cause=exc,
        )
    if isinstance(exc, httpx.TimeoutException):
        what = {
            httpx.ReadTimeout: "no data received within llm_config.recv_timeout",
            httpx.WriteTimeout: "sending the request took longer than llm_config.send_timeout",
            httpx.PoolTimeout: "no free connection within llm_config.connect_timeout",
        }.get(type(exc), "the request timed out")
        return LLMError(TRANSPORT, "timeout", what, origin=phase, cause=exc)
    if isinstance(exc, httpx.ConnectError):
        return LLMError(
            TRANSPORT,
            "connect_failed",
            f"cannot connect to the API{_where(exc)}: {_detail(exc)}",
            origin="connect",
            cause=exc,
        )
    if isinstance(exc, httpx.RemoteProtocolError | httpx.WriteError):
        return LLMError(
            TRANSPORT,
            "disconnected",
            f"the server closed the connection before the response was complete: {_detail(exc)}",
            origin=phase,
            cause=exc,
        )
    if isinstance(exc, httpx.ReadError):
        return LLMError(
            TRANSPORT,
            "read_error",
            f"reading the response failed: {_detail(exc)}",
            origin=phase,
            cause=exc,
        )
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return LLMError(
            SCHEMA, "config_invalid", f"bad api_url: {exc}", origin="request", cause=exc
        )
    if isinstance(exc, TimeoutError):
        return LLMError(TRANSPORT, "timeout", "the request timed out", origin=phase, cause=exc)
    if isinstance(exc, httpx.HTTPError | OSError):
        return LLMError(
            TRANSPORT, "read_error", f"transport failure: {_detail(exc)}", origin=phase, cause=exc
        )
    return LLMError(
        PROTOCOL, "internal_error", f"unexpected failure: {exc!r}", origin=phase, cause=exc
    )


def normalize_error(
    error: Any, *, status: int | None = None, headers: Mapping[str, str] | None = None
) -> LLMError:
    """Turn an exception, an HTTP status + body, or an error payload into an :class:`LLMError`."""
    if isinstance(error, LLMError):
        return error
    if status is not None:
        body = error if isinstance(error, bytes | str) else json.dumps(error, default=str)
        return error_from_http(status, body, headers)
    if isinstance(error, BaseException):
        return error_from_exception(error)
    return error_from_payload(error)


async def _call(handler: Any, value: Any) -> None:
    if handler is not None:
        result = handler(value)
        if result is not None and _isawaitable(result):
            await result


def _decode_json(raw: bytes, origin: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        text = raw.decode("utf-8", "replace")
        raise LLMError(
            PROTOCOL,
            "invalid_json",
            f"response body is not valid JSON ({exc}): {text[:200]!r}",
            origin=origin,
            data={"body": text[:1000]},
        ) from None


class LLMClient:
    """Async Chat-Completions client bound to one :class:`LLMConfig`.

    Use as ``async with LLMClient(cfg) as client:`` or call :meth:`aclose`. ``clock``
    (seconds, monotonic) times the catalog cache; tests pass one they move by hand.
    """

    def __init__(
        self,
        config: LLMConfig | Mapping[str, Any],
        *,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.config = coerce_config(config)
        self.base_url = normalize_api_url(self.config.api_url)
        self._http = http_client
        self._owns_http = http_client is None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._catalog: list[_catalog.ModelDescriptor] | None = None
        self._catalog_at = 0.0

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.base_url!r})"

    # ------------------------------------------ helpers of the public contract

    def normalize_api_url(self, api_url: str | None = None) -> str:
        """See :func:`smith_tui.llm.request.normalize_api_url`."""
        return normalize_api_url(self.config.api_url if api_url is None else api_url)

    def build_headers(self, *, stream: bool = False) -> dict[str, str]:
        """Request headers (Authorization only when a key is configured)."""
        return build_headers(self.config, stream=stream)

    def build_endpoint(self, path: str = "chat/completions") -> str:
        """Absolute URL of an endpoint under the API base."""
        return build_endpoint(self.base_url, path)

    def build_chat_request(
        self, request: ChatRequest | Mapping[str, Any], *, stream: bool | None = None
    ) -> dict[str, Any]:
        """Validated request body (messages sanitised)."""
        return build_chat_request(request, stream=stream)

    def serialize_request_body(self, body: Mapping[str, Any]) -> bytes:
        """Body bytes as sent."""
        return serialize_request_body(body)

    def normalize_usage(self, raw: Any) -> Usage | None:
        """See :func:`smith_tui.llm.usage.normalize_usage`."""
        return normalize_usage(raw)

    def normalize_error(
        self,
        error: Any,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> LLMError:
        """See :func:`normalize_error`."""
        return normalize_error(error, status=status, headers=headers)

    # -------------------------------------------------------------- lifecycle

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._http is None or (self._owns_http and self._http_loop is not loop):
            import ssl

            import httpx

            cfg = self.config
            verify: ssl.SSLContext | bool = True
            if self.base_url.startswith("http://"):
                # Every request goes under base_url and redirects are not followed, so a
                # plain-http server never negotiates TLS: skip loading the CA bundle (about
                # 35 ms of every start). A context trusting no certificate fails closed.
                verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            self._http = httpx.AsyncClient(
                verify=verify,
                timeout=httpx.Timeout(
                    connect=cfg.connect_timeout,
                    read=cfg.recv_timeout,
                    write=cfg.send_timeout,
                    pool=cfg.connect_timeout,
                ),
                follow_redirects=False,
            )
            self._http_loop = loop
        return self._http

    async def aclose(self) -> None:
        """Close the HTTP connection pool (if this client created it)."""
        if self._http is not None and self._owns_http:
            await self._http.aclose()
        self._http = None

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------- chat

    def _prepare(self, request: ChatRequest, *, stream: bool) -> tuple[str, dict[str, str], bytes]:
        body = build_chat_request(request, stream=stream)
        return (
            self.build_endpoint("chat/completions"),
            build_headers(self.config, stream=stream),
            serialize_request_body(body),
        )

    def _watchdog_error(self, reason: str) -> LLMError:
        if reason == STALLED:
            secs = self.config.stream_stall_timeout
            return LLMError(
                TRANSPORT,
                "stream_stalled",
                f"no data from the server for {secs:g} s (llm_config.stream_stall_timeout)",
                origin="stream",
            )
        if reason == DEADLINE:
            return LLMError(
                TRANSPORT,
                "timeout",
                f"no complete response within {self.config.timeout:g} s (llm_config.timeout)",
                origin="response",
            )
        return cancelled_error("stream")

    def _stalled_first(self, exc: BaseException) -> bool:
        """Whether a read timeout of a stream is the stall the watchdog was about to report.

        httpx's read timeout (``recv_timeout``) and the watchdog (``stream_stall_timeout``,
        checked a few times per period) both count silence; when the stall limit is not the
        longer one it had passed too, and it is the setting a user of streams tunes.
        """
        import httpx

        cfg = self.config
        return isinstance(exc, httpx.ReadTimeout) and cfg.stream_stall_timeout <= cfg.recv_timeout

    async def chat(self, request: ChatRequest | Mapping[str, Any]) -> ChatResponse:
        """One non-streaming completion (a request with ``stream=True`` is streamed instead)."""
        req = coerce_request(request)
        if req.stream:
            return await self.chat_stream(req)
        url, headers, payload = self._prepare(req, stream=False)
        cancel = req.cancel
        if cancel is not None and cancel.is_cancelled():
            raise cancelled_error("request")
        log.debug("POST %s model=%s stream=false", url, req.model)
        import httpx

        guard = Watchdog(cancel, deadline=self.config.timeout).start()
        try:
            return await self._chat_once(url, headers, payload)
        except asyncio.CancelledError:
            reason = guard.claim()
            if reason is None:
                raise
            raise self._watchdog_error(reason) from None
        except LLMError:
            reason = guard.claim()
            if reason is not None:
                raise self._watchdog_error(reason) from None
            raise
        except (httpx.HTTPError, OSError) as exc:
            reason = guard.claim()
            if reason is not None:
                raise self._watchdog_error(reason) from None
            raise error_from_exception(exc) from exc
        finally:
            guard.stop()

    async def _chat_once(self, url: str, headers: dict[str, str], payload: bytes) -> ChatResponse:
        async with self._client().stream("POST", url, content=payload, headers=headers) as resp:
            if resp.status_code >= 400:
                raise error_from_http(resp.status_code, await _read_limited(resp), resp.headers)
            raw = await resp.aread()
            asm = StreamAssembler()
            if "event-stream" in resp.headers.get("content-type", ""):
                parser = SSEParser()
                error = asm.feed_events(parser.feed(raw) + parser.close())
                if error is None and not asm.complete:
                    error = truncated_error(asm.chunks)
                if error is not None:
                    raise error
            else:
                body = _decode_json(raw, "response")
                if not isinstance(body, dict):
                    raise LLMError(
                        PROTOCOL,
                        "invalid_response",
                        f"response body must be a JSON object, got {type(body).__name__}",
                        origin="response",
                    )
                asm.feed_completion(body)
            return asm.finish()

    async def chat_stream(
        self,
        request: ChatRequest | Mapping[str, Any],
        handlers: StreamHandlers | Mapping[str, Any] | Any = None,
    ) -> ChatResponse:
        """Stream a completion, calling ``handlers`` as pieces arrive; return the whole response.

        ``on_done(response)`` runs only on success. On failure ``on_error(err)``
        runs and then the :class:`LLMError` is raised. Exceptions raised by a
        handler itself propagate unchanged. Cancelling the surrounding asyncio
        task closes the connection and re-raises ``CancelledError``.
        """
        hs = coerce_handlers(handlers)
        try:
            req = coerce_request(request)
            url, headers, payload = self._prepare(req, stream=True)
            cancel = req.cancel
            if cancel is not None and cancel.is_cancelled():
                raise cancelled_error("request")
        except LLMError as bad_request:
            await _call(hs.on_error, bad_request)
            raise
        log.debug("POST %s model=%s stream=true", url, req.model)
        import httpx

        guard = Watchdog(cancel, stall=self.config.stream_stall_timeout).start()
        try:
            response = await self._stream_once(url, headers, payload, hs, guard)
        except asyncio.CancelledError:
            reason = guard.claim()
            if reason is None:
                raise
            err = self._watchdog_error(reason)
        except LLMError as exc:
            reason = guard.claim()
            err = self._watchdog_error(reason) if reason is not None else exc
        except (httpx.HTTPError, OSError) as exc:
            reason = guard.claim()
            if reason is None and self._stalled_first(exc):
                reason = STALLED
            err = (
                self._watchdog_error(reason)
                if reason is not None
                else error_from_exception(exc, started=guard.started)
            )
        else:
            guard.stop()
            await _call(hs.on_done, response)
            return response
        finally:
            guard.stop()
        log.debug("stream failed: %s", err)
        await _call(hs.on_error, err)
        raise err

    async def _stream_once(
        self,
        url: str,
        headers: dict[str, str],
        payload: bytes,
        hs: StreamHandlers,
        guard: Watchdog,
    ) -> ChatResponse:
        table = {
            "text": hs.on_text,
            "reasoning": hs.on_reasoning,
            "tool": hs.on_tool_delta,
            "usage": hs.on_usage,
        }
        isawaitable = _isawaitable
        async with self._client().stream("POST", url, content=payload, headers=headers) as resp:
            guard.touch()
            guard.started = True
            if resp.status_code >= 400:
                raise error_from_http(resp.status_code, await _read_limited(resp), resp.headers)
            asm = StreamAssembler()
            out = asm.out
            content_type = resp.headers.get("content-type", "")
            if "json" in content_type and "event-stream" not in content_type:
                # the server ignored stream=true and answered with one JSON body
                body = _decode_json(await resp.aread(), "response")
                if not isinstance(body, dict):
                    raise LLMError(
                        PROTOCOL, "invalid_response", "response body must be a JSON object"
                    )
                asm.feed_completion(body)
            else:
                parser = SSEParser()
                feed = parser.feed
                feed_events = asm.feed_events
                seen = 0
                async for chunk in resp.aiter_bytes():
                    events = feed(chunk)
                    if parser.lines_seen != seen:
                        seen = parser.lines_seen
                        guard.touch()
                    if not events:
                        continue
                    error = feed_events(events)
                    if out:
                        for kind, value in out:
                            handler = table[kind]
                            if handler is not None:
                                result = handler(value)
                                if result is not None and isawaitable(result):
                                    await result
                        out.clear()
                    if error is not None:
                        raise error
                    if asm.done:
                        break
                else:
                    # the body ended by itself: an answer without an end marker is cut short
                    error = feed_events(parser.close())
                    if error is None and not asm.complete:
                        error = truncated_error(asm.chunks)
                    if error is not None:
                        for kind, value in out:
                            await _call(table[kind], value)
                        out.clear()
                        raise error
            asm.flush()
            for kind, value in out:
                await _call(table[kind], value)
            out.clear()
            return asm.finish()

    # ---------------------------------------------------------------- catalog

    async def list_models(self, *, refresh: bool = False) -> list[_catalog.ModelDescriptor]:
        """GET ``/models`` normalised; cached for ``config.catalog_ttl`` seconds."""
        now = self.clock()
        if (
            not refresh
            and self._catalog is not None
            and now - self._catalog_at < self.config.catalog_ttl
        ):
            return self._catalog
        import httpx

        try:
            models = await _catalog.fetch_catalog(
                self._client(), self.base_url, build_headers(self.config)
            )
        except (httpx.HTTPError, OSError) as exc:
            raise error_from_exception(exc) from exc
        self._catalog = models
        self._catalog_at = self.clock()
        return models

    async def get_model(
        self, model_id: str, *, refresh: bool = False
    ) -> _catalog.ModelDescriptor | None:
        """The catalog entry for ``model_id``, or ``None``."""
        for model in await self.list_models(refresh=refresh):
            if model.id == model_id:
                return model
        return None

    def invalidate_catalog(self) -> None:
        """Forget the cached catalog; the next :meth:`list_models` fetches again."""
        self._catalog = None


async def _read_limited(resp: httpx.Response, limit: int = _ERROR_BODY_LIMIT) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]


# ------------------------------------------------------------- module level


def new(cfg: LLMConfig | Mapping[str, Any]) -> LLMClient:
    """A client for ``cfg`` (the module-level constructor docs/LLM.md names)."""
    return LLMClient(cfg)


async def chat(
    cfg: LLMConfig | Mapping[str, Any], request: ChatRequest | Mapping[str, Any]
) -> ChatResponse:
    """One-shot :meth:`LLMClient.chat` with a throw-away client."""
    async with LLMClient(cfg) as client:
        return await client.chat(request)


async def chat_stream(
    cfg: LLMConfig | Mapping[str, Any],
    request: ChatRequest | Mapping[str, Any],
    handlers: StreamHandlers | Mapping[str, Any] | Any = None,
) -> ChatResponse:
    """One-shot :meth:`LLMClient.chat_stream` with a throw-away client."""
    async with LLMClient(cfg) as client:
        return await client.chat_stream(request, handlers)
