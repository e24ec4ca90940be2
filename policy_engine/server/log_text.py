"""Client-chosen text on its way to a log or a terminal: every control character escaped.

A method name, a notification name or a tool name is the client's choice. In
a log line a newline in it forges a line of its own, and an escape sequence
(ESC, or the one-byte C1 CSI) rewrites what an operator's terminal shows.
Log records and decision-log lines pass through here, so neither can happen.
"""

from __future__ import annotations

import logging
import re

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROLS_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _escaped(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with every C0/C1 control, DEL and line separator written as an escape."""
    return _CONTROLS.sub(_escaped, text)


def escape_json_line(line: str) -> str:
    """A JSON line (control characters below 0x20 are escaped by JSON already) with
    the C1 controls and line separators JSON leaves raw escaped too."""
    if line.isascii():
        return line
    return _CONTROLS.sub(lambda found: f"\\u{ord(found[0]):04x}", line)


class EscapingFormatter(logging.Formatter):
    """A formatter whose messages cannot forge lines or drive a terminal."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return escape_controls(super().formatMessage(record))

    def formatException(self, ei: object) -> str:
        text = super().formatException(ei)  # type: ignore[arg-type]
        return _CONTROLS_BUT_NEWLINE.sub(_escaped, text)


def configure_logging(level: int, prefix: str) -> None:
    """``logging.basicConfig`` on stderr, with the escaping formatter."""
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EscapingFormatter(f"{prefix}: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])


__all__ = ["EscapingFormatter", "configure_logging", "escape_controls", "escape_json_line"]
