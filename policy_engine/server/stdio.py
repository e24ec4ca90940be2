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

from .framing import (
    TOO_LONG_ID_SCAN,
    FractionalIds,
    Rejected,
    cancelled_request,
    decode_line,
    encode_message,
    too_long,
)

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 16 * 1024 * 1024
"""A longer line is answered with -32600 and skipped, not buffered forever."""

MAX_IN_FLIGHT = 256
"""Requests handed to the server and not yet answered. Past the limit requests
are parked (at most as many again) and the reader keeps reading, so that
responses and cancellations still get through; once the parking is full too,
the reader stops reading stdin until answers have been handed to the writer,
so a client that writes without reading its replies fills the pipe, not this
process's memory."""

_READ_SIZE = 1 << 16
_QUEUE_SIZE = 256
_DRAIN_TIMEOUT = 5.0
_COALESCE_TURNS = 32
_BATCH_BYTES = 1 << 20


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
    """Requests read and not yet answered, for backpressure and for the drain at EOF.

    At end of input the SDK stops its handlers as soon as its inbound stream
    closes; the reader keeps the stream open until the SDK's requests are
    answered, so a client that writes its last request and closes stdin still
    gets the reply. Ids are counted, not just remembered, so a client reusing
    one id for many requests cannot slip past ``limit``.
    """

    def __init__(self, limit: int = MAX_IN_FLIGHT) -> None:
        self._ids: dict[RequestId, int] = {}
        self._total = 0
        self._limit = limit
        self._changed = anyio.Event()

    def _notify(self) -> None:
        # Only the reader (waiting for room) and the drain at EOF wait on this.
        if self._total == self._limit - 1 or not self._ids:
            self._changed.set()
            self._changed = anyio.Event()

    def has_room(self) -> bool:
        return self._total < self._limit

    async def room(self) -> None:
        """Wait until fewer than ``limit`` requests are outstanding."""
        while self._total >= self._limit:
            await self._changed.wait()

    def add(self, request_id: RequestId) -> None:
        key = coerce_request_id(request_id)
        self._ids[key] = self._ids.get(key, 0) + 1
        self._total += 1

    def discard(self, request_id: RequestId | None) -> None:
        if request_id is None:
            return
        key = coerce_request_id(request_id)
        count = self._ids.get(key)
        if count is None:
            return
        if count > 1:
            self._ids[key] = count - 1
        else:
            del self._ids[key]
        self._total -= 1
        self._notify()

    def add_lane(self) -> None:
        self._total += 1

    def lane_done(self) -> None:
        self._total -= 1
        self._notify()

    async def drained(self) -> None:
        """Wait until the SDK has answered everything it was handed."""
        while self._ids:
            await self._changed.wait()


@dataclass(frozen=True, slots=True)
class _LaneReply:
    """An answer the lane encoded; the writer counts it off when it takes it."""

    line: bytes


Outgoing = SessionMessage | bytes | _LaneReply
"""What the writer takes: SDK messages, lane answers, or lines the reader encoded."""


class _Reader:
    """Splits stdin into lines and routes each: SDK, lane, or an error reply."""

    def __init__(
        self,
        fd: int,
        inbound: MemoryObjectSendStream[SessionMessage | Exception],
        replies: MemoryObjectSendStream[Outgoing],
        lane: Lane | None,
        outstanding: _Outstanding,
        fractional_ids: FractionalIds,
        max_line_bytes: int,
        max_parked: int,
    ) -> None:
        self._fd = fd
        self._inbound = inbound
        self._replies = replies
        self._lane = lane
        self._lane_calls: dict[RequestId, anyio.CancelScope] = {}
        self._outstanding = outstanding
        self._fractional_ids = fractional_ids
        self._max_line_bytes = max_line_bytes
        self._max_parked = max_parked
        self._parked = 0
        self._parked_ids: dict[RequestId, int] = {}
        self._cancelled_parked: set[RequestId] = set()
        self._parked_send: MemoryObjectSendStream[JSONRPCRequest]

    async def run(self) -> None:
        """Read until EOF, then let parked requests and calls still being answered finish."""
        async with self._replies, anyio.create_task_group() as lane_tasks, self._inbound:
            parked_send, parked_receive = anyio.create_memory_object_stream[JSONRPCRequest](
                self._max_parked
            )
            self._parked_send = parked_send
            done = anyio.Event()
            async with anyio.create_task_group() as dispatcher:

                async def dispatch() -> None:
                    try:
                        await self._dispatch_parked(parked_receive, lane_tasks)
                    finally:
                        done.set()

                dispatcher.start_soon(dispatch)
                try:
                    await self._read_lines(lane_tasks)
                finally:
                    parked_send.close()
                with anyio.move_on_after(_DRAIN_TIMEOUT):
                    await done.wait()
                dispatcher.cancel_scope.cancel()
            with anyio.move_on_after(_DRAIN_TIMEOUT):
                await self._outstanding.drained()

    async def _dispatch_parked(
        self,
        parked: MemoryObjectReceiveStream[JSONRPCRequest],
        lane_tasks: anyio.abc.TaskGroup,
    ) -> None:
        """Hand parked requests on, in order, as room frees up."""
        async with parked:
            async for request in parked:
                await self._outstanding.room()
                self._parked -= 1
                key = coerce_request_id(request.id)
                if self._parked_ids[key] > 1:
                    self._parked_ids[key] -= 1
                else:
                    del self._parked_ids[key]
                if key in self._cancelled_parked:
                    self._cancelled_parked.discard(key)
                    self._fractional_ids.forget(request.id)
                    continue  # cancelled while parked: never run, never answered (MCP)
                await self._dispatch(request, lane_tasks)

    async def _read_lines(self, lane_tasks: anyio.abc.TaskGroup) -> None:
        pending = bytearray()
        skipping = False
        while True:
            try:
                chunk = await _read_some(self._fd)
            except OSError:
                logger.exception("stdin read failed; closing")
                chunk = b""
            if not chunk:
                if pending and not skipping:
                    await self._deliver(bytes(pending), lane_tasks)
                return
            start = 0
            end = chunk.find(b"\n")
            while end >= 0:
                if skipping:
                    skipping = False
                elif pending:
                    pending += chunk[start:end]
                    await self._deliver_bounded(pending, lane_tasks)
                else:
                    await self._deliver(chunk[start:end], lane_tasks)
                pending.clear()
                start = end + 1
                end = chunk.find(b"\n", start)
            if not skipping:
                pending += chunk[start:]
            if len(pending) > self._max_line_bytes:
                rejected = too_long(bytes(pending[:TOO_LONG_ID_SCAN]), self._max_line_bytes)
                await self._replies.send(encode_message(rejected.reply))
                skipping = True
                pending.clear()

    async def _deliver_bounded(self, line: bytearray, lane_tasks: anyio.abc.TaskGroup) -> None:
        """A line completed across reads: its end may carry it past the limit."""
        if len(line) > self._max_line_bytes:
            rejected = too_long(bytes(line[:TOO_LONG_ID_SCAN]), self._max_line_bytes)
            await self._replies.send(encode_message(rejected.reply))
            return
        await self._deliver(bytes(line), lane_tasks)

    async def _deliver(self, line: bytes, lane_tasks: anyio.abc.TaskGroup) -> None:
        decoded = decode_line(line, self._fractional_ids)
        if decoded is None:
            return
        if isinstance(decoded, Rejected):
            await self._replies.send(encode_message(decoded.reply))
            return
        if isinstance(decoded, JSONRPCRequest):
            if not self._parked and self._outstanding.has_room():
                await self._dispatch(decoded, lane_tasks)
                return
            # Behind earlier parked requests, or at the limit: park it. When the
            # parking is full this waits, and nothing more is read.
            self._parked += 1
            key = coerce_request_id(decoded.id)
            self._parked_ids[key] = self._parked_ids.get(key, 0) + 1
            await self._parked_send.send(decoded)
            return
        cancelled = cancelled_request(decoded)
        if cancelled is not None and cancelled in self._parked_ids:
            self._cancelled_parked.add(cancelled)
        await self._dispatch(decoded, lane_tasks)

    async def _dispatch(self, decoded: JSONRPCMessage, lane_tasks: anyio.abc.TaskGroup) -> None:
        """Hand one message to the lane or the SDK, counting requests in."""
        lane = self._lane
        if lane is not None:
            lane.observe_inbound(decoded)
            if isinstance(decoded, JSONRPCRequest) and lane.claims(decoded):
                self._outstanding.add_lane()
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
        line: bytes | None = None
        try:
            with anyio.CancelScope() as scope:
                self._lane_calls[key] = scope
                try:
                    line = await lane.answer(request)
                finally:
                    if self._lane_calls.get(key) is scope:
                        del self._lane_calls[key]
            if line is not None:
                # Counted off by the writer; a cancelled call is never answered (MCP).
                await self._replies.send(_LaneReply(line))
        finally:
            if line is None:
                self._fractional_ids.forget(request.id)
                self._outstanding.lane_done()


async def _write_loop(
    fd: int,
    outbound: MemoryObjectReceiveStream[Outgoing],
    lane: Lane | None,
    outstanding: _Outstanding,
    fractional_ids: FractionalIds,
) -> None:
    """Write responses, coalescing whatever is ready into one write."""

    def encode(item: Outgoing) -> bytes:
        if isinstance(item, _LaneReply):
            outstanding.lane_done()
            return fractional_ids.restore(item.line)
        if isinstance(item, bytes):
            return fractional_ids.restore(item)
        if lane is not None:
            lane.observe_outbound(item.message)
        if not isinstance(item.message, JSONRPCRequest | JSONRPCNotification):
            outstanding.discard(getattr(item.message, "id", None))
        return fractional_ids.restore(encode_message(item.message))

    broken = False
    async with outbound:
        async for first in outbound:
            batch = [encode(first)]
            size = len(batch[0])
            # Give handlers that are about to finish a loop turn to queue their
            # responses too, for as long as new ones keep arriving: a burst then
            # leaves in a few writes instead of one system call per response.
            # The batch is capped so that unsent replies stay bounded.
            for _ in range(_COALESCE_TURNS):
                await anyio.lowlevel.checkpoint()
                before = len(batch)
                while size < _BATCH_BYTES:
                    try:
                        line = encode(outbound.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                    batch.append(line)
                    size += len(line)
                if len(batch) == before or size >= _BATCH_BYTES:
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
    read_fd: int | None = None,
    write_fd: int | None = None,
    *,
    lane: Lane | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_in_flight: int = MAX_IN_FLIGHT,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[Outgoing],
    ]
]:
    """Streams for the SDK's ``Server.run`` over the process's stdin and stdout.

    Pass descriptors to serve other pipes (tests, embedding); by default fds 0
    and 1 are claimed and restored on exit. ``max_line_bytes`` bounds one
    message, ``max_in_flight`` the requests read and not yet answered.
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
    outstanding = _Outstanding(max_in_flight)
    fractional_ids = FractionalIds(2 * max_in_flight)
    reader = _Reader(
        fds.read_fd,
        inbound_send,
        outbound_send.clone(),
        lane,
        outstanding,
        fractional_ids,
        max_line_bytes,
        max_in_flight,
    )
    reader_done = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                _write_loop, fds.write_fd, outbound_receive, lane, outstanding, fractional_ids
            )
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
