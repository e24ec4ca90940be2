"""Serve the fixture providers as a real policyc server process (stdio or HTTP).

Started by the tests as a subprocess. In HTTP mode it prints ``READY <port>``
and, with ``--watch``, one ``RELOAD ...`` line per reload on stdout, so tests
wait on output instead of sleeping.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from fixture_providers import DEFAULT_SPECS, FixtureProvider

from policy_engine.server import (
    CompileFailure,
    DecisionLog,
    ProviderSource,
    Reloader,
    TransportLimits,
    serve_http,
    serve_stdio,
    static_source,
    token_from_env,
)
from policy_engine.server.reload import ReloadEvent


def load_specs(paths: Sequence[Path]) -> FixtureProvider:
    """The test 'compiler': a JSON list of specs; bad JSON is a compile error."""
    path = paths[0]
    text = path.read_text()
    try:
        specs: list[dict[str, Any]] = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CompileFailure(f"{path}:{exc.lineno}:{exc.colno}: error: {exc.msg}") from None
    return FixtureProvider(specs)


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--specs", type=Path)
    parser.add_argument("--watch", action="store_true")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--sse", action="store_true", help="SSE responses instead of JSON")
    parser.add_argument("--auth-env")
    parser.add_argument("--decision-log")
    parser.add_argument("--include-payloads", action="store_true")
    parser.add_argument("--no-fast-path", action="store_true", help="route every call via the SDK")
    parser.add_argument("--max-in-flight", type=int, default=TransportLimits().max_in_flight)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)

    def announce(event: ReloadEvent) -> None:
        line = f"RELOAD {'ok' if event.ok else 'failed'} {event.message.splitlines()[0]}"
        if args.http:
            say(line)
        else:
            print(line, file=sys.stderr, flush=True)

    reloader: Reloader | None = None
    source: ProviderSource
    if args.watch:
        reloader = Reloader([args.specs], load_specs, interval=0.02, on_reload=announce)
        source = reloader.cell
    elif args.specs:
        source = static_source(load_specs([args.specs]))
    else:
        source = static_source(FixtureProvider(DEFAULT_SPECS))
    log = DecisionLog.open(args.decision_log, args.include_payloads) if args.decision_log else None

    async def run() -> None:
        async with anyio.create_task_group() as tg:
            if reloader is not None:
                tg.start_soon(reloader.run)
            if args.http:
                token = token_from_env(args.auth_env) if args.auth_env else None
                await serve_http(
                    source,
                    port=0,
                    auth_token=token,
                    stateless=args.stateless,
                    decision_log=log,
                    json_response=not args.sse,
                    ready=lambda port: say(f"READY {port}"),
                )
            else:
                await serve_stdio(
                    source,
                    decision_log=log,
                    fast_path=not args.no_fast_path,
                    limits=TransportLimits(max_in_flight=args.max_in_flight),
                )
            tg.cancel_scope.cancel()

    # The SDK's client ends a server that is slow to exit with SIGTERM; exit
    # through `finally` then too, so the log still flushes.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(0))
    try:
        anyio.run(run)
    finally:
        if log is not None:
            log.close()  # the writer thread flushes what is queued, as `policyc serve` does


if __name__ == "__main__":
    main()
