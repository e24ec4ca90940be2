"""Which files make a document's policy set, and checking them with editor text.

A set is what `policyc check DIR` would check: every ``.policy`` file under a
root. The roots are the ones the editor configured, else the document's own
directory. Text the editor holds wins over the file on disk; files on disk go
to the checker as `policyc check` reads them (bytes, or the error reading
them), so an unreadable, oversized or non-UTF-8 file gets the same diagnostic.
The walk stops at a file cap so a stray folder cannot stall the server.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..language.limits import SourceLimits
from ..language.pipeline import POLICY_SUFFIX, CheckResult, check_sources
from ..language.sources import SourceInput, read_sources

MAX_FILES = 500
MAX_DIAGNOSTICS = 1000
LIMITS = SourceLimits()


@dataclass(frozen=True)
class PolicySetFiles:
    root: Path
    files: tuple[Path, ...]
    truncated: bool = False
    """More files were found than the cap; the rest are left out."""


def set_root(document: Path, roots: Sequence[Path]) -> Path:
    """The deepest configured root holding the document, else its directory."""
    holding = [r for r in roots if document == r or r in document.parents]
    if holding:
        return max(holding, key=lambda r: len(r.parts))
    return document.parent


def files_of(root: Path, document: Path) -> PolicySetFiles:
    """The set's files, the document always among them; the walk stops past the file cap."""
    walk = (p.resolve() for p in root.rglob(f"*{POLICY_SUFFIX}") if not p.is_dir())
    found = list(itertools.islice(walk, MAX_FILES + 1))
    kept = [p for p in found[:MAX_FILES] if p != document]
    kept = [*kept[: MAX_FILES - 1], document]
    return PolicySetFiles(root, tuple(sorted(kept)), len(found) > MAX_FILES)


DiskCache = dict[Path, tuple[int, int, bytes]]
"""File bytes by path, with the (mtime_ns, size) they were read at: a hover does not reread."""


def read_set(
    files: PolicySetFiles, open_texts: Mapping[Path, str], disk: DiskCache | None = None
) -> dict[str, SourceInput]:
    """What the checker gets per file name: the editor's text, else what is on disk."""
    sources: dict[str, SourceInput] = {}
    cache: DiskCache = {} if disk is None else disk
    for path in files.files:
        text = open_texts.get(path)
        sources[str(path)] = text if text is not None else _read(path, cache)
    return sources


def _read(path: Path, cache: DiskCache) -> SourceInput:
    try:
        stat = path.stat()
    except OSError as err:
        cache.pop(path, None)
        return err
    hit = cache.get(path)
    if hit is not None and hit[:2] == (stat.st_mtime_ns, stat.st_size):
        return hit[2]
    (read,) = read_sources([path], LIMITS).values()
    if isinstance(read, bytes):
        cache[path] = (stat.st_mtime_ns, stat.st_size, read)
    return read


def text_of(given: SourceInput) -> str:
    """The text positions are counted in (what the checker decoded, or nothing)."""
    if isinstance(given, str):
        return given
    if isinstance(given, bytes):
        return given.decode("utf-8-sig", "replace")
    return ""


def check_set(sources: Mapping[str, SourceInput]) -> CheckResult:
    """Exactly what `policyc check` runs, with a cap suited to a whole workspace."""
    return check_sources(sources, cap=MAX_DIAGNOSTICS, limits=LIMITS)
