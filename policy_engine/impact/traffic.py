"""Reading a traffic file into messages, with line-numbered errors.

`iter_traffic` streams: a recording of 200,000 messages is read one line at
a time, and what it keeps to drop duplicates is a 16-byte digest per distinct
message, not the message (`policyc replay` holds no more than that).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..wire.traffic import TrafficFormatError, TrafficRecord, parse_record
from .outcome import Message

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line read; a longer one is refused after reading one byte past this, not whole."""


class TrafficFileError(Exception):
    """A traffic file that cannot be read; the message names the file and line."""


def read_traffic(path: str | Path) -> list[tuple[Message, TrafficRecord]]:
    """Every record of a traffic file, as messages; identical messages are kept once."""
    return list(iter_traffic(path))


def iter_traffic(path: str | Path) -> Iterator[tuple[Message, TrafficRecord]]:
    """The records of a traffic file one at a time, as `read_traffic` lists them.

    The file is opened before the first record is asked for, so a missing
    file fails here; a bad line fails when the iteration reaches it.
    """
    path = Path(path)
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise TrafficFileError(f"{path}: cannot read the traffic file ({exc.strerror})") from None
    return _records(path, stream)


def _records(path: Path, stream: BinaryIO) -> Iterator[tuple[Message, TrafficRecord]]:
    seen: set[bytes] = set()
    with stream:
        # `readline(limit)`: a 1 GB line costs 64 MiB, not the whole line, before it is refused.
        lines = iter(lambda: stream.readline(MAX_LINE_BYTES + 1), b"")
        for number, raw in enumerate(lines, start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise TrafficFileError(f"{path}:{number}: line is over {MAX_LINE_BYTES} bytes")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise TrafficFileError(f"{path}:{number}: line is not UTF-8") from None
            if not text.strip():
                continue
            try:
                record = parse_record(text, number)
            except TrafficFormatError as exc:
                raise TrafficFileError(f"{path}:{exc.line}: {exc.problem}") from None
            message = Message.of(
                record.event,
                record.phase,  # type: ignore[arg-type]
                record.payload,
                record.side,  # type: ignore[arg-type]
                record.context,
                f"{path.name}:{number}",
            )
            # surrogatepass: a recorded lone surrogate is a message to replay, not a crash.
            digest = message.key().encode("utf-8", "surrogatepass")
            key = hashlib.blake2b(digest, digest_size=16).digest()
            if key in seen:
                continue
            seen.add(key)
            yield message, record
