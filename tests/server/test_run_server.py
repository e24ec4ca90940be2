"""`run_server`: an application serves a policy set it compiled, as `policyc serve` does.

Real streamable HTTP on 127.0.0.1 and the real SDK client; `--watch`'s
reloading through the same options, which compile the set once at start.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from server_harness import http_client, invoke, list_interceptors

from policy_engine.compiler import compile_policies
from policy_engine.server import ListenError, ServerOptions, run_server
from policy_engine.wire import InterceptorProvider

pytestmark = pytest.mark.e2e

GUARD = """validator guard "Guards" {
  on tools/call request
  deny if $.arguments.note matches /secret/ "no secrets" code secret
}
"""
EXTRA = """validator extra "Added while serving" {
  on tools/call request
  warn if $.name == "x" "x" code x
}
"""


async def test_a_compiled_set_served_over_http_and_reloaded(tmp_path: Path) -> None:
    policy = tmp_path / "p.policy"
    policy.write_text(GUARD)
    loads: list[Sequence[Path]] = []

    def load(paths: Sequence[Path]) -> InterceptorProvider:
        loads.append(paths)
        return compile_policies(paths)

    ports: list[int] = []
    options = ServerOptions(
        provider=compile_policies(policy),
        watch=[tmp_path],
        load=load,
        listen=("127.0.0.1", 0),
        ready=ports.append,
    )
    with anyio.fail_after(90):
        async with anyio.create_task_group() as group:
            group.start_soon(run_server, options)
            while not ports:
                await anyio.sleep(0.05)
            url = f"http://127.0.0.1:{ports[0]}/mcp"
            async with http_client(url) as client:
                assert [i["name"] for i in await list_interceptors(client)] == ["guard"]
                verdict = await invoke(
                    client,
                    name="guard",
                    payload={"name": "t", "arguments": {"note": "my secret"}},
                )
                assert verdict["valid"] is False
            # The set given was served as it is: nothing compiled it again at start.
            assert loads == []
            (tmp_path / "q.policy").write_text(EXTRA)
            names: list[str] = []
            while names != ["extra", "guard"]:
                await anyio.sleep(0.2)
                async with http_client(url) as client:
                    names = sorted(i["name"] for i in await list_interceptors(client))
            assert len(loads) == 1
            group.cancel_scope.cancel()


async def test_options_that_cannot_go_together_are_refused_before_serving(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "p.policy"
    policy.write_text(GUARD)
    provider = compile_policies(policy)
    with pytest.raises(ValueError, match="need `listen`"):
        await run_server(ServerOptions(provider=provider, stateless=True))
    with pytest.raises(ValueError, match="`watch` needs `load`"):
        await run_server(ServerOptions(provider=provider, watch=[policy]))
    with pytest.raises(ListenError, match="without auth"):
        await run_server(ServerOptions(provider=provider, listen=("0.0.0.0", 0)))
