"""Reading policy files into text, with a diagnostic for every way that can fail.

A file that cannot be read (a dangling symlink, a loop, no permission), is not
UTF-8, or is larger than the limit is one ``E009``/``E011`` error at its path,
and the rest of the set is still checked: the set as a whole fails closed.
Files are read as bytes and at most one byte past the limit, so a 50 MB file
costs 1 MB of memory to refuse.
"""

from __future__ import annotations

import codecs
import errno
from collections.abc import Mapping, Sequence
from pathlib import Path

from .diagnostics import Code, Diagnostic, Span
from .limits import SourceLimits

# What a caller may hand the checker per file: text, raw bytes, or why reading failed.
SourceInput = str | bytes | OSError

_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)

WIDE_BOMS = tuple(bom for bom, _ in _BOMS)


def read_sources(paths: Sequence[Path], limits: SourceLimits) -> dict[str, SourceInput]:
    found: dict[str, SourceInput] = {}
    for path in paths:
        try:
            with path.open("rb") as handle:
                found[str(path)] = handle.read(limits.max_file_bytes + 1)
        except OSError as err:
            found[str(path)] = err
    return found


def decode_sources(
    sources: Mapping[str, SourceInput], limits: SourceLimits
) -> tuple[dict[str, str], list[Diagnostic]]:
    """Text per readable file, and a diagnostic per file that is not."""
    texts: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for name, given in sources.items():
        if isinstance(given, OSError):
            problems.append(_unreadable(name, given))
            continue
        size = len(given.encode("utf-8", "surrogatepass")) if isinstance(given, str) else len(given)
        if size > limits.max_file_bytes:
            problems.append(_too_large(name, limits))
            continue
        if isinstance(given, str):
            texts[name] = given
            continue
        try:
            texts[name] = given.decode("utf-8-sig")  # a UTF-8 byte-order mark is fine
        except UnicodeDecodeError as err:
            problems.append(_not_utf8(name, given, err))
    return texts, problems


def _unreadable(name: str, err: OSError) -> Diagnostic:
    path = Path(name)
    if err.errno == errno.ELOOP:
        reason = "it is a symlink loop"
    elif err.errno == errno.ENOENT and path.is_symlink():
        reason = "it is a symlink to a file that does not exist"
    elif err.errno == errno.EISDIR:
        reason = "it is a directory"
    else:
        reason = err.strerror or type(err).__name__
    return Diagnostic(
        Code.E011,
        f"cannot read policy file `{name}`: {reason}",
        Span(name, 1, 1, 1, 1),
        "fix or remove the file; every `.policy` file in a folder is part of the set",
    )


def _too_large(name: str, limits: SourceLimits) -> Diagnostic:
    return Diagnostic(
        Code.E009,
        f"policy file `{name}` is larger than the limit of {limits.max_file_bytes} bytes",
        Span(name, 1, 1, 1, 1),
        "split it into several files, or raise the limit with `--max-policy-bytes`",
    )


def _not_utf8(name: str, data: bytes, err: UnicodeDecodeError) -> Diagnostic:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return Diagnostic(
                Code.E011,
                f"policy file `{name}` is not UTF-8 (it starts with a {encoding} byte-order mark)",
                Span(name, 1, 1, 1, 1),
                "save the file as UTF-8",
            )
    before = data[: err.start]
    line = before.count(b"\n") + 1
    column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
    return Diagnostic(
        Code.E011,
        f"policy file `{name}` is not UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start})",
        Span(name, line, column, line, column + 1),
        "save the file as UTF-8; policyc reads no other encoding",
    )
