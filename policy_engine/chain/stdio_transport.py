"""The stdio transport to a remote interceptor server, with a shutdown that keeps deadlines.

The SDK's ``stdio_client`` always shuts a server down politely: close stdin,
wait two seconds, then signal. That is right for a session that ends, but a
caller whose deadline passed (a server that never answers its handshake)
would wait those seconds too, so `discovery_timeout_ms=1000` took three. This
transport speaks the same newline-delimited JSON-RPC to the SDK's session and
stops the server politely on a normal close, but kills its process group at
once when the session is abandoned by a cancellation (a deadline, a chain
closing early). Every wait in the shutdown is bounded.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import mcp_types as types
import orjson
from anyio.abc import Process
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

from policy_engine.wire.errors import INTERNAL_ERROR, INVALID_PARAMS
from policy_engine.wire.json_line import message_line
from policy_engine.wire.unicode import NOT_UNICODE, find_bad_text

logger = logging.getLogger("policyc.chain")

# A server that ends politely gets this long to exit after its stdin closes.
POLITE_EXIT_S = 2.0
# After a signal, how long to wait for the process to be reaped.
REAP_S = 1.0
_POLL_S = 0.01
_PIPE_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


def wire_line(
    message: types.JSONRPCMessage,
) -> tuple[bytes | None, types.JSONRPCMessage | None]:
    """The line to write for ``message``, and the answer to hand back when it cannot be.

    A message that cannot be written (a string that is not Unicode text, which
    only a library caller or a mutator could have put there: the wire refuses
    it at the door) is one sender's fault, never the peer's: a request is
    answered with -32602 under its own id, a response becomes an error for
    the peer, a notification is dropped. The transport, and every other
    request on it, carries on.
    """
    line = message_line(message)  # orjson, the same bytes (``wire.json_line``)
    if line is not None:
        return line, None
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
        return text.encode() + b"\n", None
    except (ValueError, UnicodeError):
        pass
    data = _why_unwritable(message)
    if isinstance(message, types.JSONRPCRequest):
        return None, unwritable_request(message, data)
    if isinstance(message, types.JSONRPCResponse):
        error = types.ErrorData(code=INTERNAL_ERROR, message="Internal error", data=data)
        reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return reply.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n", None
    logger.warning("dropped a message that cannot be written: %s", data["reason"])
    return None, None


def unwritable(message: types.JSONRPCMessage) -> dict[str, Any] | None:
    """Why ``message`` cannot be written as JSON text (an error's ``data``), or None.

    orjson answers for nearly every message at a fraction of pydantic's cost;
    what it refuses (a lone surrogate, an integer past 64 bits) is settled by
    the serializer the transports use.
    """
    body = getattr(message, "params", None) or getattr(message, "result", None)
    try:
        orjson.dumps(body)
        return None
    except TypeError:
        pass
    try:
        message.model_dump_json(by_alias=True, exclude_unset=True)
        return None
    except (ValueError, UnicodeError):
        return _why_unwritable(message)


def unwritable_request(request: types.JSONRPCRequest, data: dict[str, Any]) -> types.JSONRPCError:
    """The sender's own request answered: -32602, naming where, never what."""
    error = types.ErrorData(code=INVALID_PARAMS, message="Invalid params", data=data)
    return types.JSONRPCError(jsonrpc="2.0", id=request.id, error=error)


def _why_unwritable(message: types.JSONRPCMessage) -> dict[str, Any]:
    params = getattr(message, "params", None)
    bad = find_bad_text({"params": params}) if params is not None else None
    if bad is None:
        return {"reason": "message could not be serialized"}
    return {"reason": NOT_UNICODE, **bad.where()}


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, errlog: TextIO
) -> AsyncIterator[TransportStreams]:
    """Spawn the server in its own process group and bridge its pipes to the session."""
    process = await anyio.open_process(
        [server.command, *server.args],
        env=get_default_environment() | (server.env or {}),
        stderr=errlog,
        cwd=server.cwd,
        start_new_session=True,
    )
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        pending = bytearray()
        delivering = True
        try:
            async for chunk in process.stdout:
                if not delivering:
                    continue  # drain, so a server flushing its output can still exit
                pending += chunk
                while delivering and (end := pending.find(b"\n")) >= 0:
                    line = bytes(pending[:end])
                    del pending[: end + 1]
                    try:
                        await to_session.send(_parse(line))
                    except _PIPE_ERRORS:
                        delivering = False
        except _PIPE_ERRORS:
            pass
        finally:
            to_session.close()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            with from_session:
                async for message in from_session:
                    line, refusal = wire_line(message.message)
                    if refusal is not None:  # the sender's own request, answered here
                        await to_session.send(SessionMessage(refusal))
                    if line is not None:
                        await process.stdin.send(line)
        except _PIPE_ERRORS:
            to_session.close()  # the session sees the connection end, not a hang

    abandoned = False
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stdout)
            tg.start_soon(write_stdin)
            try:
                yield read_stream, write_stream
            except anyio.get_cancelled_exc_class():
                abandoned = True
                raise
            finally:
                with anyio.CancelScope(shield=True):
                    read_stream.close()
                    write_stream.close()
                    await _stop(process, polite=not abandoned)
                tg.cancel_scope.cancel()
    finally:
        for stream in (to_session, read_stream, write_stream, from_session):
            stream.close()


def _parse(line: bytes) -> SessionMessage | Exception:
    """One line of stdout; a parse error goes to the session as a value, as the SDK does."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as err:
        return err


async def _stop(process: Process, *, polite: bool) -> None:
    """Close stdin; a polite stop waits for the exit, then SIGTERM, then SIGKILL."""
    if process.stdin is not None:
        with suppress(*_PIPE_ERRORS):
            await process.stdin.aclose()
    if polite and await _exited(process, POLITE_EXIT_S):
        await _close(process)
        return
    for sig in (signal.SIGTERM, signal.SIGKILL) if polite else (signal.SIGKILL,):
        _signal_group(process, sig)
        if await _exited(process, REAP_S):
            break
    await _close(process)


def _signal_group(process: Process, sig: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":  # pragma: no cover
            process.kill()
        else:
            os.killpg(process.pid, sig)


async def _exited(process: Process, within_s: float) -> bool:
    """Poll the return code (``wait()`` would also wait for pipes a grandchild holds)."""
    with anyio.move_on_after(within_s):
        while process.returncode is None:
            await anyio.sleep(_POLL_S)
    return process.returncode is not None


async def _close(process: Process) -> None:
    if process.stdout is not None:
        with suppress(*_PIPE_ERRORS):
            await process.stdout.aclose()
    if process.returncode is None:
        return  # unkillable: leave it rather than hang
    with anyio.move_on_after(REAP_S):
        await process.aclose()
