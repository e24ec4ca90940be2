"""`--record FILE`: every invoke's payload as received and its decision, for `policyc replay`.

The recorder wraps the served provider, so no transport or handler changes:
each invoke the provider answers becomes one traffic record (format in
``wire/traffic.py``). Lines go through the decision log's writer (a bounded
queue and a thread of its own, so an invoke never waits on the disk), to a
file created owner-only: it holds raw payloads, the data policies protect.
Like the decision log, the file rotates by size (``RECORD_MAX_BYTES``, with
``RECORD_BACKUPS`` kept as ``FILE.1`` ...), so a busy server's record is
bounded on disk; `policyc replay --traffic` reads each file.
"""

from __future__ import annotations

from ..wire import InterceptorDescriptor, InvokeParams, MutationResult, ValidationResult
from ..wire.provider import InterceptorProvider, ProviderTraits, traits_of
from ..wire.traffic import TrafficRecord, record_line
from .decision_log import DecisionLog, DecisionLogSettings
from .source import ProviderSource

RECORD_MODE = 0o600
RECORD_MAX_BYTES = 256 * 1024 * 1024
RECORD_BACKUPS = 4


def open_recorder(
    path: str, max_bytes: int = RECORD_MAX_BYTES, backups: int = RECORD_BACKUPS
) -> DecisionLog:
    """A writer for traffic records at ``path`` (created, or narrowed, to mode 0600).

    It rotates before a line would take the file past ``max_bytes``: at most
    ``backups + 1`` files of that size, never an unbounded one.
    """
    settings = DecisionLogSettings(file_mode=RECORD_MODE, max_bytes=max_bytes, backups=backups)
    return DecisionLog(path, settings)


class RecordingProvider:
    """A provider that records what it is asked and what it answers."""

    def __init__(self, inner: InterceptorProvider, recorder: DecisionLog) -> None:
        self._inner = inner
        self._recorder = recorder
        # Recording is synchronous, after the inner answer: its timeouts are the
        # inner's. Every invoke goes through `invoke`, so none on the fields.
        inner_traits = traits_of(inner)
        self.traits = ProviderTraits(
            never_modifies_payload=inner_traits.never_modifies_payload,
            evaluates_in_process=inner_traits.evaluates_in_process,
            honours_timeout_ms=inner_traits.honours_timeout_ms,
        )

    def descriptors(self) -> list[InterceptorDescriptor]:
        return self._inner.descriptors()

    async def invoke(self, params: InvokeParams) -> ValidationResult | MutationResult:
        result = await self._inner.invoke(params)
        decision = "deny" if isinstance(result, ValidationResult) and not result.valid else "allow"
        record = TrafficRecord(
            event=params.event,
            phase=params.phase,
            payload=params.payload,
            context=params.context.to_wire() if params.context is not None else None,
            decision=decision,
            interceptor=params.name,
        )
        try:
            line = record_line(record)
        except (TypeError, ValueError, RecursionError):
            return result  # not JSON (a library caller's object): nothing replayable to write
        self._recorder.record_line(line)
        return result


def recording_source(source: ProviderSource, recorder: DecisionLog) -> ProviderSource:
    """``source`` with every provider it hands out recording; reloads keep recording."""
    wrapped: dict[int, tuple[InterceptorProvider, RecordingProvider]] = {}

    def current() -> InterceptorProvider:
        provider = source()
        cached = wrapped.get(id(provider))
        if cached is None or cached[0] is not provider:
            wrapped.clear()  # the old set is gone after a reload
            cached = (provider, RecordingProvider(provider, recorder))
            wrapped[id(provider)] = cached
        return cached[1]

    return current
