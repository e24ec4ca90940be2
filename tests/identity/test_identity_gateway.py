"""The gateway's HTTP front as an OAuth resource server, against a real issuer.

A hostile client brings every kind of bad token; each gets 401 or 403 with the
MCP challenge and no traceback. Two users with different roles, through the
real gateway and the SDK client, see and call different tools; the backend's
own log shows only the calls the policy allowed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_harness import ROOT, calls, free_port, gateway_argv, recorder, running, text_of
from issuer import Issuer, running_issuer
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.e2e

ROLES = ROOT / "examples" / "identity" / "role-tools.policy"
LIMIT = 60
ACCEPT = {"Accept": "application/json, text/event-stream"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@contextmanager
def auth_gateway(
    issuer: Issuer, log: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, str]]:
    """The gateway on 127.0.0.1 taking the issuer's tokens; yields (url, resource URI)."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    argv = [
        sys.executable,
        *gateway_argv(
            "--http",
            f"127.0.0.1:{port}",
            "--backend",
            recorder(log),
            "--auth-issuer",
            issuer.url,
            "--auth-resource",
            resource,
            *args,
            policies=[ROLES],
        ),
    ]
    with running(argv, port, env) as url:
        yield url, resource


@asynccontextmanager
async def client_as(url: str, token: str, mode: str = "legacy") -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client


def challenge(response: httpx2.Response) -> str:
    return response.headers.get("www-authenticate", "")


def bad_tokens(issuer: Issuer, resource: str) -> dict[str, str]:
    good = issuer.claims(resource, scope="mcp:tools")
    issuer.add("unpublished", publish=False)
    header = {"alg": "none", "typ": "JWT", "kid": "k1"}
    now = good["iat"]
    return {
        "garbage": "not-a-jwt",
        "alg none": Issuer.forge(header, good, None),
        "HS256 signed with the public key": Issuer.forge(
            {**header, "alg": "HS256"}, good, issuer.public_pem()
        ),
        "wrong audience": issuer.mint({**good, "aud": "http://127.0.0.1:1/mcp"}),
        "token for another resource": issuer.mint({**good, "aud": "https://other.example/mcp"}),
        "wrong issuer": issuer.mint({**good, "iss": "https://evil.example"}),
        "expired": issuer.mint({**good, "exp": now - 3600, "iat": now - 7200}),
        "not yet valid": issuer.mint({**good, "nbf": now + 3600}),
        "unknown kid": issuer.mint(good, kid="unpublished"),
        "known kid, another key": issuer.mint(good, kid="unpublished").replace(
            '"unpublished"', '"k1"'
        ),
        "no expiry": issuer.mint({k: v for k, v in good.items() if k != "exp"}),
        "large": "a" * 40_000,
    }


async def test_bad_tokens_get_401_with_the_challenge_and_scope_403(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    with (
        running_issuer() as issuer,
        auth_gateway(issuer, log, "--auth-required-scope", "mcp:tools") as (url, resource),
    ):
        metadata_url = f"http://127.0.0.1:{url.split(':')[2].split('/')[0]}" + (
            "/.well-known/oauth-protected-resource/mcp"
        )
        with anyio.fail_after(LIMIT):
            async with httpx2.AsyncClient(timeout=30) as raw:
                missing = await raw.post(url, json=PING, headers=ACCEPT)
                assert missing.status_code == 401
                assert challenge(missing) == (
                    f'Bearer scope="mcp:tools", resource_metadata="{metadata_url}"'
                )
                document = (await raw.get(metadata_url)).json()
                assert document == {
                    "resource": resource,
                    "authorization_servers": [issuer.url],
                    "bearer_methods_supported": ["header"],
                    "scopes_supported": ["mcp:tools"],
                }
                for case, token in bad_tokens(issuer, resource).items():
                    refused = await raw.post(
                        url, json=PING, headers={**ACCEPT, "Authorization": f"Bearer {token}"}
                    )
                    assert refused.status_code == 401, case
                    assert challenge(refused).startswith('Bearer error="invalid_token"'), case
                    assert f'resource_metadata="{metadata_url}"' in challenge(refused), case
                    assert refused.json()["error"]["code"] == -32001, case
                    assert "Traceback" not in refused.text and token not in refused.text, case
                # A 1 MB token: the HTTP layer's header bound answers 400 and closes the
                # connection, often before the client is done writing (then it sees the close).
                try:
                    huge = await raw.post(
                        url, json=PING, headers={**ACCEPT, "Authorization": "Bearer " + "a" * 2**20}
                    )
                    assert huge.status_code in (400, 431) and "Traceback" not in huge.text
                except httpx2.TransportError:
                    pass
                unscoped = issuer.mint(issuer.claims(resource, scope="other"))
                lacking = await raw.post(
                    url, json=PING, headers={**ACCEPT, "Authorization": f"Bearer {unscoped}"}
                )
                assert lacking.status_code == 403
                assert 'error="insufficient_scope"' in challenge(lacking)
                assert 'scope="mcp:tools"' in challenge(lacking)
            good = issuer.mint(issuer.claims(resource, scope="mcp:tools", roles=["ops"]))
            async with client_as(url, good) as client:
                assert text_of(await client.call_tool("echo", {"text": "in"})) == "in"
    assert [c["tool"] for c in calls(log)] == ["echo"]


async def test_two_roles_see_and_call_different_tools(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    decisions = tmp_path / "decisions.jsonl"
    with (
        running_issuer() as issuer,
        auth_gateway(issuer, log, "--decision-log", str(decisions)) as (url, resource),
    ):
        alice = issuer.mint(issuer.claims(resource, sub="alice", roles=["ops"]))
        bob = issuer.mint(issuer.claims(resource, sub="bob", roles=["dev"]))
        with anyio.fail_after(LIMIT):
            for mode in ("legacy", "auto"):  # a 2025 session and 2026-07-28 requests
                async with client_as(url, alice, mode) as client:
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    assert {"echo", "lookup_user"} <= names
                    await client.call_tool("lookup_user", {"user": "jane"})
                async with client_as(url, bob, mode) as client:
                    # By name, unlisted: the validator refuses; listed, then hidden too.
                    for _ in range(2):
                        with pytest.raises(MCPError) as refused:
                            await client.call_tool("lookup_user", {"user": "jane"})
                        assert refused.value.code == -32602
                        names = {tool.name for tool in (await client.list_tools()).tools}
                        assert "echo" in names and "lookup_user" not in names
                    assert text_of(await client.call_tool("echo", {"text": "hi"})) == "hi"
    ran = calls(log)
    assert [c["tool"] for c in ran] == ["lookup_user", "echo"] * 2
    lines = [json.loads(line) for line in decisions.read_text().splitlines()]
    denied = [line for line in lines if line["decision"] != "success"]
    assert denied and {line["principal"] for line in denied} == {"bob"}
    assert {line.get("principal") for line in lines} == {"alice", "bob"}
    text = decisions.read_text()
    assert alice not in text and bob not in text


@pytest.mark.parametrize("stateless", [False, True])
async def test_a_session_belongs_to_the_subject_that_opened_it(
    tmp_path: Path, stateless: bool
) -> None:
    """Stateful: the auth layer remembers who opened each session. Stateless: the signed
    session id covers its subject, so every replica refuses it to anyone else."""
    extra = ["--stateless", "--flow-key-env", "FLOW_KEY"] if stateless else []
    env = {"FLOW_KEY": "k" * 32}
    with (
        running_issuer() as issuer,
        auth_gateway(issuer, tmp_path / "c.log", *extra, env=env) as (url, resource),
    ):
        alice = issuer.mint(issuer.claims(resource, sub="alice", roles=["ops"]))
        mallory = issuer.mint(issuer.claims(resource, sub="mallory"))
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        with anyio.fail_after(LIMIT):
            async with httpx2.AsyncClient(timeout=30) as raw:
                opened = await raw.post(
                    url, json=initialize, headers={**ACCEPT, "Authorization": f"Bearer {alice}"}
                )
                assert opened.status_code == 200
                session = opened.headers["mcp-session-id"]
                hijack = await raw.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                    headers={
                        **ACCEPT,
                        "Authorization": f"Bearer {mallory}",
                        "Mcp-Session-Id": session,
                        "MCP-Protocol-Version": "2025-06-18",
                    },
                )
                assert hijack.status_code == 404
                own = await raw.post(
                    url,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers={
                        **ACCEPT,
                        "Authorization": f"Bearer {alice}",
                        "Mcp-Session-Id": session,
                        "MCP-Protocol-Version": "2025-06-18",
                    },
                )
                assert own.status_code == 202


def test_the_gateway_refuses_to_start_without_the_issuer_keys(tmp_path: Path) -> None:
    with running_issuer() as issuer:
        issuer.down = True
        port = free_port()
        done = subprocess.run(
            [
                sys.executable,
                *gateway_argv(
                    "--http",
                    f"127.0.0.1:{port}",
                    "--backend",
                    recorder(tmp_path / "c.log"),
                    "--auth-issuer",
                    issuer.url,
                    "--auth-resource",
                    f"http://127.0.0.1:{port}/mcp",
                    policies=[ROLES],
                ),
            ],
            cwd=str(ROOT),
            capture_output=True,
            text=True,
            timeout=LIMIT,
        )
    assert done.returncode == 1
    assert "refusing to start" in done.stderr and "Traceback" not in done.stderr
    half = subprocess.run(
        [
            sys.executable,
            *gateway_argv(
                "--http",
                "127.0.0.1:1",
                "--backend",
                "x=y",
                "--auth-issuer",
                "https://idp.example",
                policies=[ROLES],
            ),
        ],
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=LIMIT,
    )
    assert half.returncode == 2 and "--auth-resource" in half.stderr


async def test_the_client_token_never_reaches_a_backend(tmp_path: Path) -> None:
    """MCP forbids token passthrough: the backend sees the gateway's own credential."""
    backend_port = free_port()
    headers_log = tmp_path / "headers.log"
    backend = [
        sys.executable,
        str(Path(__file__).resolve().parent / "header_backend.py"),
        str(tmp_path / "calls.log"),
        str(headers_log),
        str(backend_port),
    ]
    with running_issuer() as issuer, running(backend, backend_port) as backend_url:
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        config = tmp_path / "gateway.toml"
        config.write_text(
            f"""
policies = ["{ROLES}"]

[[backends]]
name = "rec"
url = "{backend_url}"
bearer_token_env = "BACKEND_TOKEN"

[http]
listen = "127.0.0.1:{port}"

[auth]
issuer = "{issuer.url}"
resource = "{resource}"
"""
        )
        argv = [sys.executable, "-m", "policy_engine.cli.main", "gateway", "--config", str(config)]
        alice = issuer.mint(issuer.claims(resource, sub="alice", roles=["ops"]))
        with (
            running(argv, port, env={"BACKEND_TOKEN": "gateway-own-secret"}) as url,
            anyio.fail_after(LIMIT),
        ):
            for mode in ("legacy", "auto"):
                async with client_as(url, alice, mode) as client:
                    await client.call_tool("lookup_user", {"user": "jane"})
    seen = set(headers_log.read_text().splitlines())
    assert seen == {"Bearer gateway-own-secret"}
    assert [c["tool"] for c in calls(tmp_path / "calls.log")] == ["lookup_user"] * 2
