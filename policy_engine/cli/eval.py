"""`policyc eval PATH... --event E --phase P`: one message through the chain.

Prints the SEP ChainExecutionResult as JSON, or with `--explain` a human
trace of which rules fired. Exit 0 when the chain allows, 1 when it does not.
"""

from __future__ import annotations

import json
import sys

import anyio
import click

from ..wire import ChainExecutionParams, InvocationContext
from .exit_codes import ExitCode
from .flow_options import echo_synthetic_note, tool_flows
from .inputs import compile_or_exit, fail, load_json, printable, read_json_source
from .options import limit_options, limits_from


@click.command("eval")
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--event", required=True, help="Lifecycle event, e.g. tools/call.")
@click.option("--phase", type=click.Choice(["request", "response"]), required=True)
@click.option("--payload", "payload_source", help="JSON file with the payload, or - for stdin.")
@click.option("--config", "config_json", help='Per-interceptor config: {"name": {...}}.')
@click.option("--context", "context_json", help="Invocation context as JSON.")
@click.option(
    "--side",
    type=click.Choice(["sending", "receiving"]),
    help="Trust-boundary side. Default: a client's (sending requests, receiving responses).",
)
@click.option(
    "--only",
    "names",
    multiple=True,
    help="Run only these interceptors (repeatable); an unknown name is an error.",
)
@click.option(
    "--server", "servers", multiple=True, help="Remote interceptor server: a command or URL."
)
@click.option("--chain-config", type=click.Path(exists=True), help="Chain config file (JSON).")
@click.option(
    "--timeout-ms",
    type=click.IntRange(1),
    help="Deadline for the whole chain. Without it, discovery and each remote call still "
    "have a default deadline (docs/chain.md, Limits).",
)
@click.option("--explain", is_flag=True, help="Print a human trace instead of JSON.")
@limit_options
def eval_command(
    paths: tuple[str, ...],
    event: str,
    phase: str,
    payload_source: str | None,
    config_json: str | None,
    context_json: str | None,
    side: str | None,
    names: tuple[str, ...],
    servers: tuple[str, ...],
    chain_config: str | None,
    timeout_ms: int | None,
    explain: bool,
    max_payload_bytes: int,
    max_depth: int,
) -> None:
    """Evaluate a payload against policies (and remote interceptor servers)."""
    from pydantic import ValidationError

    from ..chain import ChainConfigError, DiscoveryError, load_chain_config, side_for
    from ..testing import TracingProvider, run_local_chain
    from .explain import render_explain

    if not paths and not servers and not chain_config:
        fail("give policy files, --server or --chain-config")
    flows = tool_flows("eval")
    policy_set = (
        compile_or_exit(paths, limits_from(max_payload_bytes, max_depth), flows=flows)
        if paths
        else None
    )
    payload = read_json_source(payload_source, "payload")
    try:
        params = ChainExecutionParams(
            event=event,
            phase=phase,  # type: ignore[arg-type]
            payload=payload,
            interceptors=list(names) or None,
            config=load_json(config_json, "--config") if config_json else None,
            context=InvocationContext.model_validate(load_json(context_json, "--context"))
            if context_json
            else None,
            timeout_ms=timeout_ms,
        )
    except ValidationError as exc:
        fail(f"invalid input: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}")
    chosen = side or side_for("client", params.phase)
    provider = TracingProvider(policy_set) if policy_set is not None else None

    async def run() -> object:
        config = load_chain_config(chain_config) if chain_config else None
        if provider is None:
            from ..chain import InterceptorChain

            async with InterceptorChain.connect(servers=list(servers), config=config) as chain:
                chain.check_selection(params.interceptors)
                return await chain.execute(params, side=chosen)  # type: ignore[arg-type]
        return await run_local_chain(provider, params, chosen, list(servers), config)  # type: ignore[arg-type]

    try:
        result = anyio.run(run)
    except (ChainConfigError, DiscoveryError, OSError) as exc:
        fail(str(exc))
    from ..wire import ChainExecutionResult

    assert isinstance(result, ChainExecutionResult)
    echo_synthetic_note(flows)
    if explain:
        traces = dict(provider.traces) if provider is not None else {}
        click.echo(printable(render_explain(result, traces, chosen)))
    else:
        click.echo(printable(json.dumps(result.to_wire(), indent=2, ensure_ascii=False)))
    sys.exit(ExitCode.SUCCESS if result.status == "success" else ExitCode.PROBLEMS)
