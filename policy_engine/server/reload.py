"""Hot reload: recompile policy files when they change and swap providers atomically.

Polling (content hashes, every ``interval`` seconds) instead of OS file
events: it needs no extra dependency, behaves the same on every platform and
inside containers with bind mounts, and policy sets are small enough that
hashing them twice a second costs nothing. A failed compile never replaces
the provider being served, so a half-saved edit cannot take protection down.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from policy_engine.wire import InterceptorProvider

from .source import ProviderCell

logger = logging.getLogger(__name__)

Loader = Callable[[Sequence[Path]], InterceptorProvider]
Fingerprint = tuple[tuple[str, str], ...]


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


def _files(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file()))
        else:
            found.append(path)
    return found


def fingerprint(paths: Sequence[Path]) -> Fingerprint:
    """A value that changes whenever a watched file's content, or the file set, changes."""
    entries: list[tuple[str, str]] = []
    for file in _files(paths):
        try:
            digest = hashlib.sha256(file.read_bytes()).hexdigest()
        except OSError:
            digest = "missing"
        entries.append((str(file), digest))
    return tuple(entries)


class Reloader:
    """Owns the provider cell the server reads, and refreshes it from ``paths``."""

    def __init__(
        self,
        paths: Sequence[Path | str],
        load: Loader,
        *,
        interval: float = 0.5,
        on_reload: Callable[[ReloadEvent], None] | None = None,
    ) -> None:
        self.paths = [Path(p) for p in paths]
        self._load = load
        self._interval = interval
        self._on_reload = on_reload
        self._seen = fingerprint(self.paths)
        self.cell = ProviderCell(load(self.paths))

    async def run(self) -> None:
        """Poll until cancelled."""
        while True:
            await anyio.sleep(self._interval)
            await self.check()

    async def check(self) -> ReloadEvent | None:
        """Reload once if anything changed since the last look; ``None`` if nothing did."""
        current = await anyio.to_thread.run_sync(fingerprint, self.paths)
        if current == self._seen:
            return None
        self._seen = current
        try:
            provider = await anyio.to_thread.run_sync(self._load, self.paths)
        except Exception as exc:
            event = ReloadEvent(ok=False, message=diagnostics_of(exc))
            logger.error(
                "reload failed; still serving the last good policy set:\n%s", event.message
            )
        else:
            self.cell.swap(provider)
            count = len(provider.descriptors())
            event = ReloadEvent(
                ok=True, message=f"reloaded {count} interceptors", interceptors=count
            )
            logger.info("%s from %s", event.message, ", ".join(map(str, self.paths)))
        if self._on_reload is not None:
            self._on_reload(event)
        return event
