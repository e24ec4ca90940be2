"""Which files make a document's policy set, and checking them with editor text.

A set is what `policyc check DIR` would check: every ``.policy`` file under a
root. The roots are the ones the editor configured, else the document's own
directory. Text the editor holds wins over the file on disk; files on disk go
to the checker as `policyc check` reads them (bytes, or the error reading
them), so an unreadable, oversized or non-UTF-8 file gets the same diagnostic.
The walk stops at a file cap so a stray folder cannot stall the server.

A folder is walked once, not on every request: its listing is kept
(`Listings`) with the modification time of every directory walked, so a
file created, deleted or renamed on disk (which changes its directory's
time) is seen at the next request, and the editor's file events drop it at
once. File bytes are kept by (mtime, size) in a `DiskCache`; both caches are
bounded, in sets and directories, and in files and bytes.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..language.limits import SourceLimits
from ..language.pipeline import POLICY_SUFFIX, CheckResult, check_sources
from ..language.sources import SourceInput, read_sources

MAX_FILES = 500
MAX_DIAGNOSTICS = 1000
LIMITS = SourceLimits()
MAX_LISTINGS = 16
"""Folders whose listing is kept; the least recently used is dropped past this."""
MAX_WATCHED_DIRS = 4096
"""Directories whose times vouch for a listing; a deeper tree relies on the editor's events."""
MAX_CACHED_FILES = 2 * MAX_FILES
MAX_CACHED_BYTES = 64 * 1024 * 1024


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


@dataclass(frozen=True)
class Listing:
    """The `.policy` files under a root (one past the cap, to know it was passed)."""

    root: Path
    files: tuple[Path, ...]
    dirs: tuple[tuple[Path, int], ...]
    """Each directory walked, with its mtime_ns then."""
    dirs_complete: bool
    """False when there were too many directories to note: only file events invalidate."""

    def fresh(self) -> bool:
        """No directory walked changed since (a file added, removed or renamed in it)."""
        for directory, mtime in self.dirs:
            try:
                if directory.stat().st_mtime_ns != mtime:
                    return False
            except OSError:
                return False
        return True


def scan(root: Path) -> Listing:
    """Walk ``root`` in name order, as `policyc check DIR` lists it; stop past the file cap.

    Symbolic links to directories are followed, each directory once (a link
    loop ends). Every directory entered is noted with its time, up to a cap.
    """
    files: list[Path] = []
    dirs: list[tuple[Path, int]] = []
    seen: set[tuple[int, int]] = set()
    stack = [root]
    complete = True
    while stack and len(files) <= MAX_FILES:
        directory = stack.pop()
        try:
            stat = directory.stat()
            if (stat.st_dev, stat.st_ino) in seen:
                continue
            seen.add((stat.st_dev, stat.st_ino))
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        if len(dirs) < MAX_WATCHED_DIRS:
            dirs.append((directory, stat.st_mtime_ns))
        else:
            complete = False
        below: list[Path] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                below.append(Path(entry.path))
            elif entry.name.endswith(POLICY_SUFFIX):
                files.append(Path(entry.path).resolve())
        stack.extend(reversed(below))
    return Listing(root, tuple(files[: MAX_FILES + 1]), tuple(dirs), complete)


class Listings:
    """The listing of each folder, walked once and reused while it is fresh."""

    def __init__(self) -> None:
        self._kept: OrderedDict[Path, Listing] = OrderedDict()
        self.scans = 0
        """Walks made: what the tests count to show a request did not rescan."""

    def get(self, root: Path) -> tuple[Listing, bool]:
        """The listing of ``root``, and whether it was walked just now."""
        kept = self._kept.get(root)
        if kept is not None and kept.fresh():
            self._kept.move_to_end(root)
            return kept, False
        listing = scan(root)
        self.scans += 1
        self._kept[root] = listing
        self._kept.move_to_end(root)
        while len(self._kept) > MAX_LISTINGS:
            self._kept.popitem(last=False)
        return listing, True

    def holds(self, path: Path) -> bool:
        """Whether some kept listing names ``path`` (a save of a new file does not)."""
        return any(path in listing.files for listing in self._kept.values())

    def invalidate(self, path: Path) -> None:
        """Drop the listings ``path`` lies under: a file was created or deleted there."""
        for root in [r for r in self._kept if r == path or r in path.parents]:
            del self._kept[root]


def files_of(listing: Listing, document: Path) -> PolicySetFiles:
    """The set's files, the document always among them; the rest stop at the file cap."""
    found = listing.files
    kept = [p for p in found[:MAX_FILES] if p != document]
    kept = [*kept[: MAX_FILES - 1], document]
    return PolicySetFiles(listing.root, tuple(sorted(kept)), len(found) > MAX_FILES)


class DiskCache:
    """File bytes by path, with the (mtime_ns, size) they were read at: a hover does not reread.

    Bounded in files and bytes; the least recently used go first.
    """

    def __init__(self, max_files: int = MAX_CACHED_FILES, max_bytes: int = MAX_CACHED_BYTES):
        self._files: OrderedDict[Path, tuple[int, int, bytes]] = OrderedDict()
        self._bytes = 0
        self.max_files = max_files
        self.max_bytes = max_bytes

    def __len__(self) -> int:
        return len(self._files)

    @property
    def size(self) -> int:
        return self._bytes

    def get(self, path: Path, mtime: int, size: int) -> bytes | None:
        hit = self._files.get(path)
        if hit is None or hit[:2] != (mtime, size):
            return None
        self._files.move_to_end(path)
        return hit[2]

    def put(self, path: Path, mtime: int, size: int, data: bytes) -> None:
        self.pop(path)
        if len(data) > self.max_bytes:
            return
        self._files[path] = (mtime, size, data)
        self._bytes += len(data)
        while len(self._files) > self.max_files or self._bytes > self.max_bytes:
            _, (_, _, dropped) = self._files.popitem(last=False)
            self._bytes -= len(dropped)

    def pop(self, path: Path) -> None:
        old = self._files.pop(path, None)
        if old is not None:
            self._bytes -= len(old[2])


def read_set(
    files: PolicySetFiles, open_texts: Mapping[Path, str], disk: DiskCache | None = None
) -> dict[str, SourceInput]:
    """What the checker gets per file name: the editor's text, else what is on disk."""
    sources: dict[str, SourceInput] = {}
    cache = DiskCache() if disk is None else disk
    for path in files.files:
        text = open_texts.get(path)
        sources[str(path)] = text if text is not None else _read(path, cache)
    return sources


def _read(path: Path, cache: DiskCache) -> SourceInput:
    try:
        stat = path.stat()
    except OSError as err:
        cache.pop(path)
        return err
    hit = cache.get(path, stat.st_mtime_ns, stat.st_size)
    if hit is not None:
        return hit
    (read,) = read_sources([path], LIMITS).values()
    if isinstance(read, bytes):
        cache.put(path, stat.st_mtime_ns, stat.st_size, read)
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
