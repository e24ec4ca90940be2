"""Which files make a document's policy set, and checking them with editor text.

A set is what `policyc check DIR` would check: every ``.policy`` file under a
root. The roots are the ones the editor configured, else the document's own
directory. Text the editor holds wins over the file on disk. Sets are bounded
(files and bytes) so a stray folder cannot stall the server.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..language.pipeline import POLICY_SUFFIX, CheckResult, check_sources

MAX_FILES = 500
MAX_FILE_BYTES = 1024 * 1024
MAX_DIAGNOSTICS = 1000


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
    walk = (p.resolve() for p in root.rglob(f"*{POLICY_SUFFIX}") if p.is_file())
    found = list(itertools.islice(walk, MAX_FILES + 1))
    kept = [p for p in found[:MAX_FILES] if p != document]
    kept = [*kept[: MAX_FILES - 1], document]
    return PolicySetFiles(root, tuple(sorted(kept)), len(found) > MAX_FILES)


DiskCache = dict[Path, tuple[int, int, str]]
"""File text by path, with the (mtime_ns, size) it was read at: a hover does not reread the set."""


def read_set(
    files: PolicySetFiles, open_texts: Mapping[Path, str], disk: DiskCache | None = None
) -> dict[str, str]:
    """Source text per file name, open documents taking precedence; unreadable files skipped."""
    sources: dict[str, str] = {}
    cache: DiskCache = {} if disk is None else disk
    for path in files.files:
        text = open_texts.get(path)
        if text is None:
            text = _read(path, cache)
        if text is not None and len(text) <= MAX_FILE_BYTES:
            sources[str(path)] = text
    return sources


def _read(path: Path, cache: DiskCache) -> str | None:
    try:
        stat = path.stat()
        if stat.st_size > MAX_FILE_BYTES:
            return None
        hit = cache.get(path)
        if hit is not None and hit[:2] == (stat.st_mtime_ns, stat.st_size):
            return hit[2]
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        cache.pop(path, None)
        return None
    cache[path] = (stat.st_mtime_ns, stat.st_size, text)
    return text


def check_set(sources: dict[str, str]) -> CheckResult:
    """Exactly what `policyc check` runs, with a cap suited to a whole workspace."""
    return check_sources(sources, cap=MAX_DIAGNOSTICS)
