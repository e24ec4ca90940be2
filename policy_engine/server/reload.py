"""Hot reload: recompile policy files when they change and swap providers atomically.

What is watched: files named on the command line, and the ``.policy`` files
below named folders (the compiler's own rule). Anything else in a folder (a
decision log, a 300 MB data file) is never read, hashed or stat'ed beyond
its name, so it can neither trigger a recompile nor cost CPU.

How: polling file metadata (size, mtime, inode) every ``interval`` seconds,
not OS file events. watchfiles (Rust ``notify``, well kept) was considered:
it would add a compiled dependency to the server for a set of a handful of
files, and inotify misses changes on network and some bind mounts and
through the symlink swap that Kubernetes uses to update ConfigMaps, where a
stat poll sees them. A stat of a few policy files twice a second costs
microseconds; contents are read only after the metadata changed.

When: a change is acted on only once the metadata has stayed the same for
``settle`` seconds, so a file is read after the editor (or ``cp``) finished
writing it, not halfway. Saving a file unchanged reads it but does not
recompile (contents are compared by hash).

Fail closed: a failed compile never replaces the provider being served, and
neither does a set that would drop interceptors (a half-written file that
happens to compile, a deleted file) unless the operator allowed it
(``allow_shrink``), nor an empty set, which start-up refuses too. Each
refusal is logged with its reason.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from policy_engine.wire import InterceptorProvider

from .source import ProviderCell

logger = logging.getLogger(__name__)

POLICY_SUFFIX = ".policy"
DEFAULT_INTERVAL = 0.5
DEFAULT_SETTLE = 0.3

Loader = Callable[[Sequence[Path]], InterceptorProvider]
Fingerprint = tuple[tuple[str, int, int, int], ...]
"""(path, size, mtime in ns, inode) per watched file; -1s for a file that is gone."""


class CompileFailure(Exception):
    """What a loader may raise: ``diagnostics_text`` is logged as it stands."""

    def __init__(self, diagnostics_text: str) -> None:
        super().__init__(diagnostics_text)
        self.diagnostics_text = diagnostics_text


@dataclass(frozen=True)
class ReloadEvent:
    ok: bool
    message: str
    interceptors: int | None = None


def diagnostics_of(exc: BaseException) -> str:
    text = getattr(exc, "diagnostics_text", None)
    return text if isinstance(text, str) and text else f"{type(exc).__name__}: {exc}"


def watched_files(paths: Sequence[Path], suffix: str = POLICY_SUFFIX) -> list[Path]:
    """Files as given; below a folder only names ending in ``suffix``."""
    found: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            for file in sorted(path.rglob(f"*{suffix}")):
                found.setdefault(file, None)
        else:
            found.setdefault(path, None)
    return list(found)


def fingerprint(paths: Sequence[Path], suffix: str = POLICY_SUFFIX) -> Fingerprint:
    """A value that changes whenever a watched file's metadata, or the file set, changes."""
    entries: list[tuple[str, int, int, int]] = []
    for file in watched_files(paths, suffix):
        try:
            info = os.stat(file)
        except OSError:
            entries.append((str(file), -1, -1, -1))
            continue
        entries.append((str(file), info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(entries)


def content_digest(files: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            digest.update(Path(name).read_bytes())
        except OSError:
            digest.update(b"\0missing\0")
        digest.update(b"\0")
    return digest.hexdigest()


def _names(provider: InterceptorProvider) -> list[str]:
    return [d.name for d in provider.descriptors()]


class Reloader:
    """Owns the provider cell the server reads, and refreshes it from ``paths``."""

    def __init__(
        self,
        paths: Sequence[Path | str],
        load: Loader,
        *,
        interval: float = DEFAULT_INTERVAL,
        settle: float = DEFAULT_SETTLE,
        allow_shrink: bool = False,
        suffix: str = POLICY_SUFFIX,
        on_reload: Callable[[ReloadEvent], None] | None = None,
        initial: InterceptorProvider | None = None,
    ) -> None:
        """``initial``: what ``load(paths)`` gave the caller already (compiled once, not twice)."""
        self.paths = [Path(p) for p in paths]
        self._load = load
        self._interval = interval
        self._settle = settle
        self._allow_shrink = allow_shrink
        self._suffix = suffix
        self._on_reload = on_reload
        self._seen = fingerprint(self.paths, suffix)
        self._digest = content_digest([entry[0] for entry in self._seen])
        self._pending: Fingerprint | None = None
        self._pending_since = 0.0
        self.cell = ProviderCell(initial if initial is not None else load(self.paths))

    async def run(self) -> None:
        """Poll until cancelled."""
        while True:
            await anyio.sleep(self._interval)
            await self.check()

    async def check(self) -> ReloadEvent | None:
        """Reload once if something changed and has settled; ``None`` if nothing to do yet."""
        current = await anyio.to_thread.run_sync(fingerprint, self.paths, self._suffix)
        if current == self._seen:
            self._pending = None
            return None
        now = time.monotonic()
        if current != self._pending:
            self._pending, self._pending_since = current, now
        if now - self._pending_since < self._settle:
            return None  # still being written: look again next time
        self._seen, self._pending = current, None
        digest = await anyio.to_thread.run_sync(content_digest, [entry[0] for entry in current])
        if digest == self._digest:
            return None  # saved without a change
        self._digest = digest
        event = await self._reload()
        if self._on_reload is not None:
            self._on_reload(event)
        return event

    async def reload_now(self) -> ReloadEvent:
        """Reload at once, changed or not (an operator's SIGHUP), by the same rules."""
        self._seen = await anyio.to_thread.run_sync(fingerprint, self.paths, self._suffix)
        self._digest = await anyio.to_thread.run_sync(
            content_digest, [entry[0] for entry in self._seen]
        )
        event = await self._reload()
        if self._on_reload is not None:
            self._on_reload(event)
        return event

    async def _reload(self) -> ReloadEvent:
        try:
            provider = await anyio.to_thread.run_sync(self._load, self.paths)
        except Exception as exc:
            event = ReloadEvent(ok=False, message=diagnostics_of(exc))
            logger.error(
                "reload failed; still serving the last good policy set:\n%s", event.message
            )
            return event
        refusal = self._refusal(_names(self.cell()), _names(provider))
        if refusal is not None:
            logger.error("reload refused; still serving the last good policy set: %s", refusal)
            return ReloadEvent(ok=False, message=f"reload refused: {refusal}")
        self.cell.swap(provider)
        count = len(provider.descriptors())
        event = ReloadEvent(ok=True, message=f"reloaded {count} interceptors", interceptors=count)
        logger.info("%s from %s", event.message, ", ".join(map(str, self.paths)))
        return event

    def _refusal(self, before: list[str], after: list[str]) -> str | None:
        if not after:
            return "the new policy set has no interceptors"
        dropped = [name for name in before if name not in set(after)]
        if dropped and not self._allow_shrink:
            return (
                f"it would drop {len(dropped)} interceptor(s): {', '.join(dropped[:10])}"
                f"{' ...' if len(dropped) > 10 else ''} (--allow-shrink permits this)"
            )
        return None
