"""Characters a reviewer cannot see: control, invisible and bidirectional ones.

Trojan Source (CVE-2021-42574): a `U+202E` in a string or comment reorders
what an editor or a diff shows, and a `U+200B` makes two tool names look
equal. The formatter writes every such character as an escape, `check`
warns where one sits (W310), and renderers print them escaped. This module
is the one home for what counts as hidden and how each context spells it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

# Categories that never show as themselves: controls, format characters
# (bidi overrides, zero-width joiners, tags), line and paragraph separators,
# private use and lone surrogates. Unassigned code points are left alone so
# a newer emoji is not flagged.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})
# Visible-looking-as-nothing characters of other categories.
_HIDDEN_EXTRA = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x2800, 0x3164, 0xFFA0}
    | set(range(0xFE00, 0xFE10))
    | set(range(0xE0100, 0xE01F0))
)
_BIDI = frozenset({0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)})
# Ordinary layout in a source file: not worth a warning outside strings.
_LAYOUT = frozenset("\t\n\r")
_PLAIN = re.compile(r"[\t\n\r\x20-\x7e]*")
"""Text with no character that ``is_hidden`` could flag (a fast path for whole files)."""


def is_hidden(char: str) -> bool:
    """Whether ``char`` does not show as itself: it must be written as an escape."""
    code = ord(char)
    if code < 0x7F:
        return code < 0x20
    category = unicodedata.category(char)
    if category in _HIDDEN_CATEGORIES or code in _HIDDEN_EXTRA:
        return True
    return category == "Zs"  # no-break and other spaces look like a space and are not one


def is_bidi(char: str) -> bool:
    return ord(char) in _BIDI


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: what a warning calls the character."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def visible(text: str, keep: str = "") -> str:
    """``text`` with every hidden character shown as ``\\u{XXXX}``, for terminals and logs.

    ``keep`` names layout characters the caller wrote itself (the line ends
    of a multi-line report) and that stay as they are.
    """
    if not any(c not in keep and is_hidden(c) for c in text):
        return text
    return "".join(f"\\u{{{ord(c):04X}}}" if c not in keep and is_hidden(c) else c for c in text)


def json_escape(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with hidden characters escaped.

    JSON already escapes the C0 controls inside strings, so a raw line end
    or tab is layout (``indent=2``); a hidden character never sits inside an
    escape sequence, so each one can be replaced where it stands. Above the
    BMP it becomes a surrogate pair, as JSON spells it.
    """
    if not any(c not in _LAYOUT and is_hidden(c) for c in text):
        return text
    out: list[str] = []
    for char in text:
        if char in _LAYOUT or not is_hidden(char):
            out.append(char)
            continue
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


def regex_escape(source: str) -> str:
    """Regex source with each hidden character written as RE2's ``\\x{XXXX}``.

    An escaped hidden character (a backslash before it) means the character
    itself, so the pair becomes the one escape.
    """
    if not any(is_hidden(c) for c in source):
        return source
    out: list[str] = []
    index = 0
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source):
            following = source[index + 1]
            out.append(f"\\x{{{ord(following):04X}}}" if is_hidden(following) else char + following)
            index += 2
            continue
        out.append(f"\\x{{{ord(char):04X}}}" if is_hidden(char) else char)
        index += 1
    return "".join(out)


def hidden_in(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, char) of each hidden character a source file holds, 1-based.

    Lines are split on ``\\n`` only, as the parser counts them; tabs and line
    ends are layout, not hidden.
    """
    if _PLAIN.fullmatch(text):
        return  # printable ASCII and layout only: nothing can be hidden
    for number, line in enumerate(text.split("\n"), start=1):
        if _PLAIN.fullmatch(line):
            continue
        for column, char in enumerate(line, start=1):
            if char not in _LAYOUT and is_hidden(char):
                yield number, column, char
