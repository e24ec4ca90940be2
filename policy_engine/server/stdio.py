"""A stdio transport that answers every line and keeps worker threads off the hot path.

The SDK's stdio transport reads and writes through ``anyio.wrap_file``, so each
line costs two thread hops, and it drops lines it cannot parse. This one reads
and writes the pipes directly from the event loop (non-blocking descriptors
watched by the loop's selector), coalesces the responses that are ready into
one write, and answers unparseable lines itself (see ``framing``). Above it the
SDK's dispatcher and runner still speak full MCP, so SDK clients see no
difference. An optional *lane* may take some requests off the SDK's path
(see ``fastpath``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCMessage, JSONRPCNotification, JSONRPCRequest, RequestId

from policy_engine.wire.errors import INVALID_REQUEST

from .framing import Rejected, cancelled_request, decode_line, encode_message, rejection

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 16 * 1024 * 1024
"""A longer line is answered with -32600 and skipped, not buffered forever."""

_READ_SIZE = 1 << 16
_QUEUE_SIZE = 256
_DRAIN_TIMEOUT = 5.0
_COALESCE_TURNS = 32

Outgoing = SessionMessage | bytes
"""What the writer takes: SDK messages, or lines the lane already encoded."""


class Lane(Protocol):
    """Answers some requests without the SDK; watches traffic to know when it may."""

    def observe_inbound(self, message: JSONRPCMessage) -> None: ...
    def observe_outbound(self, message: JSONRPCMessage) -> None: ...
    def claims(self, request: JSONRPCRequest) -> bool: ...
    async def answer(self, request: JSONRPCRequest) -> bytes: ...


@dataclass
class _WireFds:
    read_fd: int
    write_fd: int
    restore: list[tuple[int, int]]

    def release(self) -> None:
        """Point the standard descriptors back at the pipes and close our copies."""
        for private, standard in self.restore:
            with contextlib.suppress(OSError):
                os.dup2(private, standard)
            with contextlib.suppress(OSError):
                os.close(private)


def _claim_standard_fds() -> _WireFds:
    """Take fds 0 and 1 for the wire and park stdin on /dev/null, stdout on stderr.

    A stray ``print`` from a provider then lands on stderr instead of tearing a
    JSON-RPC frame, and nothing else in the process can read our requests.
    """
    read_fd = os.dup(0)
    write_fd = os.dup(1)
    os.set_inheritable(read_fd, False)
    os.set_inheritable(write_fd, False)
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, 0)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr: stray output goes nowhere rather than onto the wire
            os.dup2(null, 1)
    finally:
        os.close(null)
    return _WireFds(read_fd, write_fd, [(read_fd, 0), (write_fd, 1)])


async def _read_some(fd: int) -> bytes:
    while True:
        try:
            return os.read(fd, _READ_SIZE)
        except BlockingIOError:
            await anyio.wait_readable(fd)


async def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            await anyio.wait_writable(fd)
            continue
        view = view[written:]


class _Outstanding:
    """Requests handed to the SDK and not yet answered.

    At end of input the SDK stops its handlers as soon as its inbound stream
    closes; the reader keeps the stream open until these are answered, so a
    client that writes its last request and closes stdin still gets the reply.
    """

    def __init__(self) -> None:
        self._ids: set[RequestId] = set()
        self._empty = anyio.Event()
        self._empty.set()

    def add(self, request_id: RequestId) -> None:
        self._ids.add(coerce_request_id(request_id))
        if self._empty.is_set():
            self._empty = anyio.Event()

    def discard(self, request_id: RequestId | None) -> None:
        if request_id is None:
            return
        self._ids.discard(coerce_request_id(request_id))
        if not self._ids:
            self._empty.set()

    async def drained(self) -> None:
        await self._empty.wait()


class _Reader:
    """Splits stdin into lines and routes each: SDK, lane, or an error reply."""

    def __init__(
        self,
        fd: int,
        inbound: MemoryObjectSendStream[SessionMessage | Exception],
        replies: MemoryObjectSendStream[Outgoing],
        lane: Lane | None,
        outstanding: _Outstanding,
    ) -> None:
        self._fd = fd
        self._inbound = inbound
        self._replies = replies
        self._lane = lane
        self._lane_calls: dict[RequestId, anyio.CancelScope] = {}
        self._outstanding = outstanding

    async def run(self) -> None:
        """Read until EOF, then let calls the lane is still answering finish."""
        async with self._replies, anyio.create_task_group() as lane_tasks, self._inbound:
            await self._read_lines(lane_tasks)
            with anyio.move_on_after(_DRAIN_TIMEOUT):
                await self._outstanding.drained()

    async def _read_lines(self, lane_tasks: anyio.abc.TaskGroup) -> None:
        pending = b""
        skipping = False
        while True:
            try:
                chunk = await _read_some(self._fd)
            except OSError:
                logger.exception("stdin read failed; closing")
                chunk = b""
            if not chunk:
                if pending and not skipping:
                    await self._deliver(pending, lane_tasks)
                return
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if skipping:
                    skipping = False
                    continue
                await self._deliver(line, lane_tasks)
            if len(pending) > MAX_LINE_BYTES:
                if not skipping:
                    rejected = rejection(
                        None, INVALID_REQUEST, "Invalid Request", "message too long"
                    )
                    await self._replies.send(SessionMessage(rejected.reply))
                skipping = True
                pending = b""

    async def _deliver(self, line: bytes, lane_tasks: anyio.abc.TaskGroup) -> None:
        decoded = decode_line(line)
        if decoded is None:
            return
        if isinstance(decoded, Rejected):
            await self._replies.send(SessionMessage(decoded.reply))
            return
        lane = self._lane
        if lane is not None:
            lane.observe_inbound(decoded)
            if isinstance(decoded, JSONRPCRequest) and lane.claims(decoded):
                lane_tasks.start_soon(self._answer_in_lane, lane, decoded)
                return
            cancelled = cancelled_request(decoded)
            if cancelled is not None and (scope := self._lane_calls.get(cancelled)) is not None:
                scope.cancel()
        cancelled = cancelled_request(decoded)
        if cancelled is not None:
            self._outstanding.discard(cancelled)  # a cancelled request is never answered
        if isinstance(decoded, JSONRPCRequest):
            self._outstanding.add(decoded.id)
        try:
            await self._inbound.send(SessionMessage(decoded))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("dropped a message: the server stopped reading")

    async def _answer_in_lane(self, lane: Lane, request: JSONRPCRequest) -> None:
        key = coerce_request_id(request.id)
        with anyio.CancelScope() as scope:
            self._lane_calls[key] = scope
            try:
                line = await lane.answer(request)
            finally:
                if self._lane_calls.get(key) is scope:
                    del self._lane_calls[key]
        if scope.cancelled_caught:
            return  # the peer cancelled it: MCP says such a request is not answered
        await self._replies.send(line)


async def _write_loop(
    fd: int,
    outbound: MemoryObjectReceiveStream[Outgoing],
    lane: Lane | None,
    outstanding: _Outstanding,
) -> None:
    """Write responses, coalescing whatever is ready into one write."""

    def encode(item: Outgoing) -> bytes:
        if isinstance(item, bytes):
            return item
        if lane is not None:
            lane.observe_outbound(item.message)
        if not isinstance(item.message, JSONRPCRequest | JSONRPCNotification):
            outstanding.discard(getattr(item.message, "id", None))
        return encode_message(item.message)

    broken = False
    async with outbound:
        async for first in outbound:
            batch = [encode(first)]
            # Give handlers that are about to finish a loop turn to queue their
            # responses too, for as long as new ones keep arriving: a burst then
            # leaves in a few writes instead of one system call per response.
            for _ in range(_COALESCE_TURNS):
                await anyio.lowlevel.checkpoint()
                before = len(batch)
                while True:
                    try:
                        batch.append(encode(outbound.receive_nowait()))
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                if len(batch) == before:
                    break
            if broken:
                continue
            try:
                await _write_all(fd, b"".join(batch))
            except (BrokenPipeError, ConnectionResetError):
                logger.debug("stdout closed by the client; discarding output")
                broken = True


@asynccontextmanager
async def stdio_transport(
    read_fd: int | None = None, write_fd: int | None = None, *, lane: Lane | None = None
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[Outgoing],
    ]
]:
    """Streams for the SDK's ``Server.run`` over the process's stdin and stdout.

    Pass descriptors to serve other pipes (tests, embedding); by default fds 0
    and 1 are claimed and restored on exit.
    """
    fds = (
        _claim_standard_fds()
        if read_fd is None or write_fd is None
        else _WireFds(read_fd, write_fd, [])
    )
    blocking = [(fd, os.get_blocking(fd)) for fd in (fds.read_fd, fds.write_fd)]
    for fd, _ in blocking:
        os.set_blocking(fd, False)
    inbound_send, inbound_receive = anyio.create_memory_object_stream[SessionMessage | Exception](
        _QUEUE_SIZE
    )
    outbound_send, outbound_receive = anyio.create_memory_object_stream[Outgoing](_QUEUE_SIZE)
    outstanding = _Outstanding()
    reader = _Reader(fds.read_fd, inbound_send, outbound_send.clone(), lane, outstanding)
    reader_done = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_write_loop, fds.write_fd, outbound_receive, lane, outstanding)
            reader_scope = anyio.CancelScope()

            async def read() -> None:
                try:
                    with reader_scope:
                        await reader.run()
                finally:
                    reader_done.set()

            tg.start_soon(read)
            try:
                yield inbound_receive, outbound_send
            finally:
                outbound_send.close()
                inbound_receive.close()
                try:
                    with anyio.move_on_after(_DRAIN_TIMEOUT):
                        await reader_done.wait()
                finally:
                    reader_scope.cancel()
                    tg.cancel_scope.deadline = anyio.current_time() + _DRAIN_TIMEOUT
    finally:
        for fd, was_blocking in blocking:
            with contextlib.suppress(OSError):
                os.set_blocking(fd, was_blocking)
        fds.release()
