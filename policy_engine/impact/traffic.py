"""Reading a traffic file into messages, with line-numbered errors."""

from __future__ import annotations

from pathlib import Path

from ..wire.traffic import TrafficFormatError, TrafficRecord, parse_record
from .outcome import Message

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line read; a longer one is refused after reading one byte past this, not whole."""


class TrafficFileError(Exception):
    """A traffic file that cannot be read; the message names the file and line."""


def read_traffic(path: str | Path) -> list[tuple[Message, TrafficRecord]]:
    """Every record of a traffic file, as messages; identical messages are kept once."""
    path = Path(path)
    seen: set[str] = set()
    found: list[tuple[Message, TrafficRecord]] = []
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise TrafficFileError(f"{path}: cannot read the traffic file ({exc.strerror})") from None
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
            key = message.key()
            if key in seen:
                continue
            seen.add(key)
            found.append((message, record))
    return found
