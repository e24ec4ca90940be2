"""`run_server`: serve a provider as an interceptor server, the library way `policyc serve` does.

The CLI only parses its options into `ServerOptions` and calls `run_server`
(as `policyc gateway` does `run_gateway`), so an application can serve a
policy set it compiled itself, with the same transports, limits, decision
log, traffic record and reloading, without a subprocess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from ..wire import InterceptorProvider
from .decision_log import DecisionLog
from .http_app import listen, serve_http
from .limits import TransportLimits
from .oauth import TokenVerifier
from .reload import Reloader
from .serve import serve_stdio
from .source import ProviderSource, static_source


@dataclass
class ServerOptions:
    """What to serve and how: ``policyc serve``'s flags as fields.

    ``provider`` is served as it is; with ``watch`` and ``load``, ``load`` is
    called again on ``watch``'s files whenever they change and the result
    swapped in (the last good set stays when an edit does not compile or
    would drop interceptors, unless ``allow_shrink``). ``listen`` is
    ``(host, port)`` for streamable HTTP, ``None`` for stdio.
    """

    provider: InterceptorProvider
    watch: Sequence[Path] = ()
    load: Callable[[Sequence[Path]], InterceptorProvider] | None = None
    allow_shrink: bool = False
    listen: tuple[str, int] | None = None
    auth_token: str | None = field(default=None, repr=False)
    # OAuth 2.1 resource server (docs/identity.md): tokens checked against an issuer.
    verifier: TokenVerifier | None = None
    allow_unauthenticated_remote: bool = False
    stateless: bool = False
    allowed_hosts: tuple[str, ...] = ()
    limits: TransportLimits = field(default_factory=TransportLimits)
    # Opened and closed by the caller, which owns the files (and their SIGHUP reopen).
    decision_log: DecisionLog | None = None
    record: DecisionLog | None = None
    # HTTP only: told the bound port once the server listens (port 0 picks one).
    ready: Callable[[int], None] | None = None


def _check(options: ServerOptions) -> None:
    """Refuse options that cannot go together, before anything is bound or started."""
    if options.watch and options.load is None:
        raise ValueError("`watch` needs `load`, to compile the watched files again")
    if options.auth_token and options.verifier is not None:
        raise ValueError("give `auth_token` or `verifier`, not both")
    if options.listen is None and (
        options.auth_token
        or options.verifier is not None
        or options.stateless
        or options.allowed_hosts
        or options.allow_unauthenticated_remote
    ):
        raise ValueError(
            "auth_token, verifier, stateless, allowed_hosts and allow_unauthenticated_remote "
            "need `listen`"
        )


async def run_server(options: ServerOptions) -> None:
    """Serve until stdin closes (stdio) or the task is cancelled (HTTP).

    Raises ``ValueError`` for options that do not go together and
    ``ListenError`` when the address cannot be bound (both before serving).
    """
    _check(options)
    sock = None
    if options.listen is not None:
        host, port = options.listen
        sock = listen(
            host,
            port,
            auth_configured=options.auth_token is not None or options.verifier is not None,
            allow_unauthenticated_remote=options.allow_unauthenticated_remote,
        )
    try:
        reloader = None
        if options.watch and options.load is not None:
            reloader = Reloader(
                options.watch,
                options.load,
                allow_shrink=options.allow_shrink,
                initial=options.provider,
            )
        source: ProviderSource = (
            reloader.cell if reloader is not None else static_source(options.provider)
        )
        if options.record is not None:
            from .traffic_recorder import recording_source

            source = recording_source(source, options.record)
        async with anyio.create_task_group() as group:
            if reloader is not None:
                group.start_soon(reloader.run)
            if options.listen is None:
                await serve_stdio(source, decision_log=options.decision_log, limits=options.limits)
            else:
                await serve_http(
                    source,
                    host=options.listen[0],
                    auth_token=options.auth_token,
                    stateless=options.stateless,
                    decision_log=options.decision_log,
                    ready=options.ready,
                    allowed_hosts=options.allowed_hosts,
                    limits=options.limits,
                    sock=sock,
                    verifier=options.verifier,
                )
            group.cancel_scope.cancel()
    finally:
        if sock is not None:
            sock.close()
